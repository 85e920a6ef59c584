// memcap/harness/results/atomic_file.cpp — see atomic_file.hpp.
#include "harness/results/atomic_file.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <unistd.h>

namespace memcap {
namespace {

std::string parent_of(const std::string& path) {
    const auto parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

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
    std::error_code ec;
    const auto status = std::filesystem::status(path_, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
        !std::filesystem::is_directory(status)) {
        // A device or pipe (/dev/stdout, /dev/full, a FIFO): write through, never rename over it.
        file_ = std::fopen(path_.c_str(), "wb");
        if (!file_) throw UsageError("output '" + path_ + "': cannot open: " + std::strerror(errno));
        return;
    }
    check_writable(path_);
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
}

void AtomicFile::commit() {
    // fsync only for real files: devices and pipes cannot be synced
    const bool flushed = std::fflush(file_) == 0 && (tmp_.empty() || ::fsync(::fileno(file_)) == 0);
    const int err = errno;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (tmp_.empty()) {  // written through to a device or pipe
        if (!flushed || !closed) throw UsageError("output '" + path_ + "': write failed: " + std::strerror(errno));
        return;
    }
    if (!flushed || !closed) {
        std::remove(tmp_.c_str());
        throw UsageError("output '" + path_ + "': write failed: " + std::strerror(flushed ? errno : err));
    }
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int rerr = errno;
        std::remove(tmp_.c_str());
        throw UsageError("output '" + path_ + "': cannot rename into place: " + std::strerror(rerr));
    }
}

}  // namespace memcap
