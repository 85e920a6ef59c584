// memcap/harness/exec/journal.cpp — see journal.hpp.
#include "harness/exec/journal.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace memcap {

std::uint64_t fnv1a(const char* data, std::size_t size, std::uint64_t h) {
    for (std::size_t i = 0; i < size; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 1099511628211ULL;
    return h;
}

std::string hex16(std::uint64_t x) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
    return buf;
}

Journal::Journal(std::string path, const std::string& header, std::size_t cells)
    : path_(std::move(path)), where_(cells, {kMissing, 0}) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UsageError("journal '" + path_ + "': cannot create: " + std::strerror(errno));
    write_all(header);
    end_ = header.size();
    sync();
}

Journal::Journal(std::string path, const std::string& header, std::size_t cells, std::string& note)
    : path_(std::move(path)), where_(cells, {kMissing, 0}) {
    std::string text;
    {
        std::ifstream in(path_, std::ios::binary);
        if (!in) throw UsageError("journal '" + path_ + "' cannot be read");
        std::ostringstream ss;
        ss << in.rdbuf();
        text = ss.str();
    }
    fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) throw UsageError("journal '" + path_ + "': cannot open for writing: " + std::strerror(errno));
    std::size_t pos = 0;
    if (text.compare(0, header.size(), header) == 0) {
        pos = header.size();
    } else if (header.compare(0, text.size(), text) == 0) {  // torn while being created
        truncate_to(0);
        write_all(header);
        text = header;
        pos = header.size();
    } else {
        throw UsageError("journal '" + path_ + "' was written for a different config or memcap version");
    }
    while (pos < text.size()) {
        const std::size_t record = parse_record(text, pos);
        if (record == 0) break;
        pos += record;
    }
    if (pos < text.size()) {
        note = "journal '" + path_ + "': dropped an incomplete record at its end (" +
               std::to_string(text.size() - pos) + " bytes); that cell is computed again";
        truncate_to(pos);
    }
    end_ = pos;
}

Journal::~Journal() {
    if (fd_ >= 0) ::close(fd_);
}

void Journal::append(std::size_t cell, const std::string& rows) {
    const auto lines = std::count(rows.begin(), rows.end(), '\n');
    const std::string head =
        "@" + std::to_string(cell) + " " + std::to_string(lines) + " " + hex16(fnv1a(rows.data(), rows.size())) + "\n";
    write_all(head + rows);
    if (where_[cell].first == kMissing) ++done_;
    where_[cell] = {end_ + head.size(), rows.size()};
    end_ += head.size() + rows.size();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_sync_ > std::chrono::seconds(2)) sync(), last_sync_ = now;  // bounds the loss on power failure
}

std::string Journal::rows(std::size_t cell) const {
    std::string out(where_[cell].second, '\0');
    std::size_t got = 0;
    while (got < out.size()) {
        const auto r = ::pread(fd_, &out[got], out.size() - got, static_cast<off_t>(where_[cell].first + got));
        if (r <= 0) throw UsageError("journal '" + path_ + "': read failed: " + std::strerror(errno));
        got += static_cast<std::size_t>(r);
    }
    return out;
}

void Journal::sync() {
    if (::fdatasync(fd_) != 0) throw UsageError("journal '" + path_ + "': sync failed: " + std::strerror(errno));
}

std::size_t Journal::parse_record(const std::string& text, std::size_t pos) {
    const auto eol = text.find('\n', pos);
    if (eol == std::string::npos || text[pos] != '@') return 0;
    unsigned long long cell = 0, lines = 0;
    char hash[17] = {};
    const std::string head = text.substr(pos, eol - pos);
    if (std::sscanf(head.c_str(), "@%llu %llu %16s", &cell, &lines, hash) != 3 || cell >= where_.size()) return 0;
    std::size_t end = eol + 1;
    for (unsigned long long i = 0; i < lines; ++i) {
        const auto nl = text.find('\n', end);
        if (nl == std::string::npos) return 0;
        end = nl + 1;
    }
    if (hex16(fnv1a(text.data() + eol + 1, end - eol - 1)) != hash) return 0;
    if (where_[cell].first == kMissing) {  // a cell journaled twice keeps its first (identical) record
        where_[cell] = {eol + 1, end - eol - 1};
        ++done_;
    }
    return end - pos;
}

void Journal::write_all(const std::string& text) {
    std::size_t put = 0;
    while (put < text.size()) {
        const auto w = ::write(fd_, text.data() + put, text.size() - put);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw UsageError("journal '" + path_ + "': write failed: " + std::strerror(errno));
        put += static_cast<std::size_t>(w);
    }
}

void Journal::truncate_to(std::size_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
        throw UsageError("journal '" + path_ + "': cannot truncate: " + std::strerror(errno));
}

}  // namespace memcap
