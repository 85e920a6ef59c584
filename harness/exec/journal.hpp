// memcap/harness/exec/journal.hpp — the sweep journal: every finished cell, flushed as it finishes.
//
// Format (text): a header line, then one record per finished cell:
//
//   memcap-journal 1 config=<16 hex digits> cells=<N>
//   @<cell index> <line count> <FNV-1a 64 of the lines, 16 hex digits>
//   <that many CSV rows, exactly as they go into the results CSV>
//
// A record counts only when all its lines are there and its checksum matches,
// so a torn last record (kill -9, power loss mid-write) is dropped when the
// journal is reopened and that cell is computed again. Records are appended
// with one write(2) each and synced at most every 2 s.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memcap {

/// FNV-1a 64-bit hash of `size` bytes, continuing from `h`.
std::uint64_t fnv1a(const char* data, std::size_t size, std::uint64_t h = 1469598103934665603ULL);
/// `x` as 16 lower-case hex digits.
std::string hex16(std::uint64_t x);

class Journal {
public:
    static constexpr std::uint64_t kMissing = ~0ULL;

    /// Creates a new journal (it must not exist) holding only `header`.
    Journal(std::string path, const std::string& header, std::size_t cells);

    /// Opens an existing journal, keeps its complete records and cuts off a torn tail.
    /// `note` receives a line for the user when something was cut.
    Journal(std::string path, const std::string& header, std::size_t cells, std::string& note);

    ~Journal();
    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;

    /// Appends one finished cell (written with one write(2), then visible to readers).
    void append(std::size_t cell, const std::string& rows);

    bool done(std::size_t cell) const { return where_[cell].first != kMissing; }
    std::size_t done_count() const { return done_; }

    /// The rows journaled for `cell` (which must be done).
    std::string rows(std::size_t cell) const;

    void sync();
    const std::string& path() const { return path_; }

private:
    /// Length of the complete, valid record at `pos`, or 0 if it is torn or corrupt.
    std::size_t parse_record(const std::string& text, std::size_t pos);

    void write_all(const std::string& text);

    void truncate_to(std::size_t size);

    std::string path_;
    int fd_ = -1;
    std::uint64_t end_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> where_;  // per cell: (offset, length) of its rows
    std::size_t done_ = 0;
    std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();
};

}  // namespace memcap
