// memcap/harness/output.cpp — see output.hpp.
#include "harness/output.hpp"

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
    check_writable(path_);
    tmp_ = path_ + ".tmp." + std::to_string(::getpid());
    file_ = std::fopen(tmp_.c_str(), "wb");
    if (!file_) throw UsageError("output '" + path_ + "': cannot create file: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
    if (file_) {
        std::fclose(file_);
        std::remove(tmp_.c_str());
    }
}

void AtomicFile::write(const std::string& text) {
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
        throw UsageError("output '" + path_ + "': write failed: " + std::strerror(errno));
}

void AtomicFile::commit() {
    const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
    const int err = errno;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
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
