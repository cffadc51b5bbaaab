#include "tests/support/history_check.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace capstan::test {

namespace {

std::string name_of(const topic_partition& tp) {
  return tp.first + "-" + std::to_string(tp.second);
}

std::string value_of(const read_record& r) {
  return r.value ? *r.value : "<null>";
}

class checker {
public:
  explicit checker(const partition_history& h) : h_(h), where_(name_of(h.tp) + ": ") {
    for (const auto& r : h.final_read) {
      final_[r.off.value()] = value_of(r);
      end_ = std::max(end_, r.off.value() + 1);
    }
  }

  std::vector<anomaly> run() {
    duplicates("the final read", h_.final_read);
    for (const auto& [node, log] : h_.replicas) {
      duplicates("node " + std::to_string(node) + "'s log", log);
      replica(node, log);
    }
    std::unordered_map<std::string, int64_t> at;
    for (const auto& r : h_.final_read) at.emplace(value_of(r), r.off.value());
    for (const auto& producer : h_.acked) acknowledged(producer, at);
    for (size_t c = 0; c < h_.consumed.size(); ++c) consumer(c, h_.consumed[c]);
    if (!h_.consumed.empty()) unseen();
    return std::move(found_);
  }

private:
  void add(const char* kind, const std::string& detail) {
    found_.push_back({kind, where_ + detail});
  }

  void duplicates(const std::string& where, const std::vector<read_record>& log) {
    std::unordered_map<std::string, int64_t> first;
    for (const auto& r : log) {
      auto [it, fresh] = first.emplace(value_of(r), r.off.value());
      if (!fresh)
        add("duplicate", value_of(r) + " at offsets " + std::to_string(it->second) + " and " +
                             std::to_string(r.off.value()) + " in " + where);
    }
  }

  // Below the final read's end a replica holds exactly what the final read has.
  void replica(int node, const std::vector<read_record>& log) {
    std::map<int64_t, std::string> has;
    for (const auto& r : log) has[r.off.value()] = value_of(r);
    for (const auto& [off, value] : final_) {
      auto it = has.find(off);
      if (it == has.end())
        add("inconsistent-offsets", "node " + std::to_string(node) + " lacks offset " +
                                        std::to_string(off) + " (" + value + ")");
      else if (it->second != value)
        add("inconsistent-offsets", "offset " + std::to_string(off) + " is " + value +
                                        " in the final read and " + it->second + " on node " +
                                        std::to_string(node));
    }
  }

  void acknowledged(const std::vector<acked_record>& acked,
                    const std::unordered_map<std::string, int64_t>& at) {
    auto by_send = acked;
    std::sort(by_send.begin(), by_send.end(),
              [](const acked_record& a, const acked_record& b) { return a.sent < b.sent; });
    const acked_record* previous = nullptr;
    for (const auto& a : by_send) {
      auto found = at.find(a.value);
      if (found == at.end()) {
        add("lost-write", a.value + " acknowledged at offset " + std::to_string(a.offset) +
                              ", not in the final read (end " + std::to_string(end_) + ")");
      } else if (a.offset >= 0 && found->second != a.offset) {
        add("inconsistent-offsets", a.value + " acknowledged at offset " +
                                        std::to_string(a.offset) + ", read at " +
                                        std::to_string(found->second));
      }
      if (a.offset < 0) continue;
      if (previous && a.offset <= previous->offset)
        add("nonmonotonic", a.value + " acknowledged at offset " + std::to_string(a.offset) +
                                ", not after " + previous->value + " sent before it at " +
                                std::to_string(previous->offset));
      previous = &a;
    }
  }

  void consumer(size_t index, const std::vector<read_record>& reads) {
    const std::string who = "consumer " + std::to_string(index);
    int64_t last = -1;
    const int64_t start = final_.empty() ? 0 : final_.begin()->first;
    for (const auto& r : reads) {
      const auto off = r.off.value();
      seen_.insert(value_of(r));
      auto f = final_.find(off);
      if (f != final_.end() && f->second != value_of(r))
        add("inconsistent-offsets", who + " read " + value_of(r) + " at offset " +
                                        std::to_string(off) + ", the final read has " + f->second);
      else if (f == final_.end() && off >= end_)
        add("inconsistent-offsets", who + " read " + value_of(r) + " at offset " +
                                        std::to_string(off) + ", past the final read's end " +
                                        std::to_string(end_));
      if (last >= 0 && off <= last)
        add("nonmonotonic",
            who + " read offset " + std::to_string(off) + " after " + std::to_string(last));
      const int64_t expected = last < 0 ? start : last + 1;
      if (off > expected) {
        auto skipped = final_.lower_bound(expected);
        if (skipped != final_.end() && skipped->first < off)
          add("poll-skip", who + " went from offset " + std::to_string(last) + " to " +
                               std::to_string(off) + ", over " + std::to_string(skipped->first) +
                               " (" + skipped->second + ")");
      }
      last = std::max(last, off);
    }
  }

  void unseen() {
    for (const auto& producer : h_.acked)
      for (const auto& a : producer)
        if (a.offset >= 0 && a.offset < end_ && seen_.count(a.value) == 0)
          add("unseen", a.value + " acknowledged at offset " + std::to_string(a.offset) +
                            ", below the end " + std::to_string(end_) + ", read by no consumer");
  }

  const partition_history& h_;
  std::string where_;
  std::map<int64_t, std::string> final_;
  int64_t end_ = 0;
  std::unordered_set<std::string> seen_;
  std::vector<anomaly> found_;
};

} // namespace

std::vector<anomaly> check_partition(const partition_history& h) {
  return checker(h).run();
}

std::string describe(const std::vector<anomaly>& found, size_t per_kind) {
  std::map<std::string, size_t> count;
  std::string out;
  for (const auto& a : found)
    if (++count[a.kind] <= per_kind) out += a.kind + ": " + a.detail + "\n";
  for (const auto& [kind, n] : count)
    if (n > per_kind) out += kind + ": " + std::to_string(n - per_kind) + " more\n";
  return out;
}

} // namespace capstan::test
