// memcap/harness/results/atomic_file.hpp — writing result files without leaving half of one.
//
// AtomicFile writes to `<path>.tmp.<pid>` beside the target and renames it
// over the target on commit(); if destroyed uncommitted (an error, an
// exception) it removes the temporary, so a failed run leaves no file behind
// and never changes an existing one. Every write is checked: a full disk or an
// unwritable directory is a UsageError naming the path. A target that is a
// device or pipe (/dev/stdout, a FIFO) is written through, never replaced.
// A process killed outright (SIGKILL) cannot remove its temporary: the next
// AtomicFile for the same path removes every `<path>.tmp.<pid>` whose process
// no longer runs, and names each on stderr.
#pragma once

#include <cstdio>
#include <string>

namespace memcap {

/// True for a target AtomicFile writes through rather than replaces: a device, pipe or FIFO,
/// or a link under /dev or /proc (/dev/stdout, whose descriptor may be a regular file).
bool writes_through(const std::string& path);

class AtomicFile {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    /// Writes `text` (checked). A real file's data goes to the disk in the background as it
    /// grows, every kWriteBehind bytes, so that sync() at the end waits for the last part only.
    void write(const std::string& text);
    static constexpr long long kWriteBehind = 256 << 10;
    /// Flushes and syncs the temporary to disk: the first half of commit(), which a caller
    /// can run on another thread to wait for the disk while it does other work (then joins
    /// it before commit). Throws as commit() does, removing nothing: the destructor does.
    void sync();
    /// Flushes, syncs (unless sync() did) and renames the temporary over the target.
    void commit();
    const std::string& path() const { return path_; }

private:
    std::string path_, tmp_;
    std::FILE* file_ = nullptr;
    bool synced_ = false;
    long long written_ = 0, handed_ = 0;  // bytes written; of them, handed to the disk ahead of sync()
};

/// Throws UsageError unless a file could be created at `path` (its directory exists and is writable).
void check_writable(const std::string& path);

}  // namespace memcap
