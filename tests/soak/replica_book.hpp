// ReplicaBook: the books of the soak's replicated-route mode (folsom_soak --routes), in which
// writes go through an AllSyncRoute to every replica. Each load thread owns its keys (no other
// thread writes them) and never has two writes to one key in flight, so every replica applies
// a key's writes in the order they were issued, and what each replica must hold at the end
// follows from the replies alone:
//
// * a write answered without error (`stored`; `deleted` or `not_found` for a delete) reached
//   every replica: until the next write, each holds that value (or nothing, for a delete), or
//   nothing if it was killed since the write was issued (memcached keeps nothing over a
//   restart; not since it was answered: a replica may reply and die before the others reply);
// * a write answered with an error may have reached some replicas, none, or may still be
//   waiting in a frozen replica's socket to be applied after a later write: the key is retired
//   (the thread's slot moves to a new key name, never written) and not checked.
//
// The book also checks reads: a hit on a key whose state was known when the read was issued
// (no write in flight), with no write issued before the read completed, must be exactly that
// state's value.
//
// Values name their key, their version (unique per write) and their length, so a value of
// another key, an older write, or a truncated or spliced one is told apart from the right one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace folsom::soak {

/// "<key>|<version>|<size>|<filler>", `size` bytes long (more when `size` is shorter than the
/// part before the filler); the filler's letter depends on the version.
inline std::string versioned_value(std::string_view key, std::uint64_t version, std::size_t size) {
    const std::string head = std::string(key) + '|' + std::to_string(version) + '|';
    for (;;) {
        std::string v = head + std::to_string(size) + '|';
        if (v.size() <= size) {
            v.resize(size, static_cast<char>('a' + version % 26));
            return v;
        }
        size = v.size() + 1;  // too short for its own header: a little longer
    }
}

/// The version `v` carries when it is a well-formed versioned_value of `key`; nullopt if not.
inline std::optional<std::uint64_t> version_in(std::string_view key, std::string_view v) {
    if (v.size() <= key.size() || v.substr(0, key.size()) != key || v[key.size()] != '|')
        return std::nullopt;
    auto number = [&v](std::size_t& at) -> std::optional<std::uint64_t> {
        std::uint64_t n = 0;
        const std::size_t from = at;
        while (at < v.size() && v[at] >= '0' && v[at] <= '9' && at - from < 19)
            n = n * 10 + static_cast<std::uint64_t>(v[at++] - '0');
        if (at == from || at >= v.size() || v[at] != '|') return std::nullopt;
        ++at;
        return n;
    };
    std::size_t at = key.size() + 1;
    const auto version = number(at);
    if (!version) return std::nullopt;
    const auto size = number(at);
    if (!size || *size != v.size()) return std::nullopt;
    const char filler = static_cast<char>('a' + *version % 26);
    for (; at < v.size(); ++at)
        if (v[at] != filler) return std::nullopt;
    return version;
}

/// The values of an ascii `get k1 k2 ...` reply, by key; nullopt when the reply is not whole
/// (it must end with END) or not well-formed.
inline std::optional<std::map<std::string, std::string, std::less<>>> parse_get_reply(
    std::string_view r) {
    std::map<std::string, std::string, std::less<>> values;
    for (;;) {
        const auto eol = r.find("\r\n");
        if (eol == std::string_view::npos) return std::nullopt;
        const auto line = r.substr(0, eol);
        if (line == "END") return eol + 2 == r.size() ? std::optional(values) : std::nullopt;
        // VALUE <key> <flags> <bytes>[ <cas>]
        if (line.substr(0, 6) != "VALUE ") return std::nullopt;
        const auto k_end = line.find(' ', 6);
        if (k_end == std::string_view::npos) return std::nullopt;
        const auto f_end = line.find(' ', k_end + 1);
        if (f_end == std::string_view::npos) return std::nullopt;
        const auto b_end = line.find(' ', f_end + 1);
        const auto bytes_text =
            line.substr(f_end + 1, b_end == std::string_view::npos ? std::string_view::npos
                                                                   : b_end - f_end - 1);
        std::size_t bytes = 0;
        for (char c : bytes_text) {
            if (c < '0' || c > '9') return std::nullopt;
            bytes = bytes * 10 + static_cast<std::size_t>(c - '0');
        }
        if (bytes_text.empty() || r.size() < eol + 2 + bytes + 2 ||
            r.substr(eol + 2 + bytes, 2) != "\r\n")
            return std::nullopt;
        values.emplace(std::string(line.substr(6, k_end - 6)),
                       std::string(r.substr(eol + 2, bytes)));
        r.remove_prefix(eol + 2 + bytes + 2);
    }
}

/// One load thread's keys: `slots` of them, each named "<prefix><slot>.<generation>".
/// Thread-safe (the thread issues, the clients' threads complete).
class ReplicaBook {
  public:
    ReplicaBook(std::string prefix, std::size_t slots)
        : prefix_(std::move(prefix)), slots_(slots) {}

    std::size_t slots() const noexcept { return slots_.size(); }

    /// The current name of `slot`'s key.
    std::string key(std::size_t slot) const {
        std::lock_guard<std::mutex> lock(mu_);
        return name(slot, slots_[slot].generation);
    }

    /// A write about to be issued.
    struct Write {
        std::string key;
        std::uint32_t generation = 0;
        std::uint64_t version = 0;  ///< unique in this book (a set's value carries it)
    };
    /// Starts a write to `slot` (nullopt when one is in flight: the caller reads instead).
    /// `kill_sequence`: the fault injector's count of kills so far, read before the write is
    /// sent (see Expected::since).
    std::optional<Write> begin_write(std::size_t slot, std::uint64_t kill_sequence) {
        std::lock_guard<std::mutex> lock(mu_);
        Slot& s = slots_[slot];
        if (s.writing) return std::nullopt;
        s.writing = true;
        ++s.writes;
        s.write_since = kill_sequence;
        return Write{name(slot, s.generation), s.generation, ++versions_};
    }
    /// The write's reply: `ok` when it was answered without error (a set `stored`, a delete
    /// `deleted` or `not_found`); `value_size` is 0 for a delete. A reply that is not ok
    /// retires the key. A second reply to one write is ignored here (the LoadLedger counts it).
    void end_write(std::size_t slot, const Write& w, bool ok, std::size_t value_size) {
        std::lock_guard<std::mutex> lock(mu_);
        Slot& s = slots_[slot];
        if (!s.writing || s.generation != w.generation) return;
        s.writing = false;
        ++writes_answered_;
        if (!ok) {
            ++s.generation;  // a fresh name, on no replica
            s.writes = 0;
            s.present = false;
            ++retired_;
            return;
        }
        s.present = value_size > 0;
        s.version = w.version;
        s.size = value_size;
        s.since = s.write_since;
    }

    /// What a read of `slot` may see, taken when it is issued.
    struct Read {
        std::string key;
        std::uint32_t generation = 0;
        std::uint64_t writes = 0;
        bool known = false;  ///< no write in flight
        bool present = false;
        std::uint64_t version = 0;
        std::size_t size = 0;
    };
    Read begin_read(std::size_t slot) const {
        std::lock_guard<std::mutex> lock(mu_);
        const Slot& s = slots_[slot];
        return Read{name(slot, s.generation),
                    s.generation,
                    s.writes,
                    !s.writing,
                    s.present,
                    s.version,
                    s.size};
    }
    /// A read's answer (`value` empty on a miss; a miss is always possible: a replica may
    /// have been restarted). False when it contradicts the state the key was known to be in
    /// (checked only when no write to the key was issued meanwhile).
    bool end_read(std::size_t slot, const Read& r, std::optional<std::string_view> value) {
        std::lock_guard<std::mutex> lock(mu_);
        const Slot& s = slots_[slot];
        if (!r.known || s.generation != r.generation || s.writes != r.writes) return true;
        ++reads_checked_;
        if (!value) return true;
        const auto version = version_in(r.key, *value);
        if (r.present && version && *version == r.version && value->size() == r.size) return true;
        ++read_mismatches_;
        return false;
    }

    /// What every replica must hold for one key at the end.
    struct Expected {
        std::string key;
        bool present = false;  ///< false: deleted, or never written
        std::string value;     ///< when present
        /// The kill count when the write was issued: a replica killed after that may have
        /// lost the value (and then has none).
        std::uint64_t since = 0;
    };
    /// Every key whose last write was answered without error (or that was never written),
    /// with no write in flight.
    std::vector<Expected> expected() const {
        std::lock_guard<std::mutex> lock(mu_);
        std::vector<Expected> out;
        for (std::size_t i = 0; i < slots_.size(); ++i) {
            const Slot& s = slots_[i];
            if (s.writing) continue;
            Expected e{name(i, s.generation), s.present, {}, s.since};
            if (s.present) e.value = versioned_value(e.key, s.version, s.size);
            out.push_back(std::move(e));
        }
        return out;
    }

    std::uint64_t retired() const {
        std::lock_guard<std::mutex> lock(mu_);
        return retired_;
    }
    std::uint64_t writes_answered() const {
        std::lock_guard<std::mutex> lock(mu_);
        return writes_answered_;
    }
    std::uint64_t reads_checked() const {
        std::lock_guard<std::mutex> lock(mu_);
        return reads_checked_;
    }
    std::uint64_t read_mismatches() const {
        std::lock_guard<std::mutex> lock(mu_);
        return read_mismatches_;
    }

  private:
    struct Slot {
        std::uint32_t generation = 0;
        std::uint64_t writes = 0;  // writes issued under this name
        bool writing = false;
        std::uint64_t write_since = 0;  // the kill count when the write in flight was issued
        // The state every replica is in (but for restarts) after the last answered write.
        bool present = false;
        std::uint64_t version = 0;
        std::size_t size = 0;
        std::uint64_t since = 0;
    };

    std::string name(std::size_t slot, std::uint32_t generation) const {
        return prefix_ + std::to_string(slot) + '.' + std::to_string(generation);
    }

    const std::string prefix_;
    mutable std::mutex mu_;
    std::vector<Slot> slots_;
    std::uint64_t versions_ = 0;
    std::uint64_t retired_ = 0, writes_answered_ = 0, reads_checked_ = 0, read_mismatches_ = 0;
};

}  // namespace folsom::soak
