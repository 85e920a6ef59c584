// memcap/harness/results/atomic_file.cpp — see atomic_file.hpp.
#include "harness/results/atomic_file.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

namespace memcap {
namespace {

std::string parent_of(const std::string& path) {
    const auto parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

/// Removes PATH.tmp.PID files that a process killed before it could clean up (SIGKILL, power
/// loss) left beside `path`: those whose PID no longer runs (kill(pid, 0) fails with ESRCH).
/// A live process's temporary file is left alone. Each removal is named on stderr.
void remove_stale_temporaries(const std::string& path) {
    const std::filesystem::path p(path);
    const std::string prefix = p.filename().string() + ".tmp.";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(parent_of(path), ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string pid_text = name.substr(prefix.size());
        if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
        const long pid = std::stol(pid_text);
        if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        std::error_code rm;
        if (std::filesystem::remove(entry.path(), rm))
            std::cerr << "memcap: removed '" << entry.path().string() << "', left by process " << pid
                      << " which no longer runs\n";
    }
}

}  // namespace

bool writes_through(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    // /dev/stdout and friends are links into /proc/self/fd: when the descriptor is a regular
    // file, renaming over the link would replace /dev/stdout itself.
    const bool descriptor_link = std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)) &&
                                 (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0);
    return descriptor_link || (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
                               !std::filesystem::is_directory(status));
}

void check_writable(const std::string& path) {
    const std::string dir = parent_of(path);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw UsageError("output '" + path + "': directory '" + dir + "' does not exist");
    if (::access(dir.c_str(), W_OK) != 0)
        throw UsageError("output '" + path + "': directory '" + dir + "' is not writable");
    if (std::filesystem::is_directory(path, ec))
        throw UsageError("output '" + path + "' is a directory, not a file");
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
    if (writes_through(path_)) {
        // A device or pipe (/dev/stdout, /dev/full, a FIFO): write through, never rename over it.
        file_ = std::fopen(path_.c_str(), "wb");
        if (!file_) throw UsageError("output '" + path_ + "': cannot open: " + std::strerror(errno));
        return;
    }
    check_writable(path_);
    remove_stale_temporaries(path_);
    tmp_ = path_ + ".tmp." + std::to_string(::getpid());
    file_ = std::fopen(tmp_.c_str(), "wb");
    if (!file_) throw UsageError("output '" + path_ + "': cannot create file: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
    if (file_) {
        std::fclose(file_);
        if (!tmp_.empty()) std::remove(tmp_.c_str());
    }
}

void AtomicFile::write(const std::string& text) {
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
        throw UsageError("output '" + path_ + "': write failed: " + std::strerror(errno));
    written_ += static_cast<long long>(text.size());
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    // Start the disk's writes of what has accumulated (without waiting for them): the fsync of
    // commit() then has little left to wait for (docs/performance.md). Durability is still
    // commit()'s fsync, which also reports what fails in the disk's writes started here.
    if (!tmp_.empty() && written_ - handed_ >= kWriteBehind) {
        if (std::fflush(file_) != 0) throw UsageError("output '" + path_ + "': write failed: " + std::strerror(errno));
        ::sync_file_range(::fileno(file_), handed_, written_ - handed_, SYNC_FILE_RANGE_WRITE);
        handed_ = written_;
    }
#endif
}

void AtomicFile::sync() {
    if (synced_) return;
    // fsync only for real files: devices and pipes cannot be synced
    if (std::fflush(file_) != 0 || (!tmp_.empty() && ::fsync(::fileno(file_)) != 0)) {
        const int err = errno;
        throw UsageError("output '" + path_ + "': write failed: " + std::strerror(err));
    }
    synced_ = true;
}

void AtomicFile::commit() {
    try {
        sync();
    } catch (const UsageError&) {
        std::fclose(file_);
        file_ = nullptr;
        if (!tmp_.empty()) std::remove(tmp_.c_str());
        throw;
    }
    const bool closed = std::fclose(file_) == 0;
    const int err = errno;
    file_ = nullptr;
    if (!closed) {
        if (!tmp_.empty()) std::remove(tmp_.c_str());
        throw UsageError("output '" + path_ + "': write failed: " + std::strerror(err));
    }
    if (tmp_.empty()) return;  // written through to a device or pipe
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int rerr = errno;
        std::remove(tmp_.c_str());
        throw UsageError("output '" + path_ + "': cannot rename into place: " + std::strerror(rerr));
    }
}

}  // namespace memcap
