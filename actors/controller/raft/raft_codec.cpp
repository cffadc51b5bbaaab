#include "actors/controller/raft/raft_codec.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include <capnp/message.h>

#include "actors/controller/raft/voter_set.hpp"
#include "schema/raft.capnp.h"

namespace capstan::raft {

namespace {

using wire = schema::RaftMessage;

void set_entry(schema::RaftEntry::Builder b, const entry& e) {
  b.setTerm(e.term.value());
  b.setIndex(e.index.value());
  b.setData(kj::arrayPtr(e.data.data(), e.data.size()));
  b.setVoters(e.kind == entry_kind::voters);
}

bytes to_bytes(capnp::Data::Reader d) {
  return bytes(d.begin(), d.end());
}

error corrupt(const std::string& what) {
  return make_error(errc::corrupt_message, "raft message: " + what);
}

kj::ArrayPtr<const uint8_t> data_of(const directory_id& d) {
  return kj::arrayPtr(d.data(), d.size());
}

// `empty_ok`: an empty field means "not known" (all zeros).
result<directory_id> read_directory(capnp::Data::Reader d, bool empty_ok, const char* field) {
  directory_id out{};
  if (d.size() == 0 && empty_ok) return out;
  if (d.size() != out.size())
    return corrupt(std::string(field) + " of " + std::to_string(d.size()) + " bytes");
  std::copy(d.begin(), d.end(), out.begin());
  if (out == directory_id{}) return corrupt(std::string(field) + " is all zeros");
  return out;
}

template <class Builder>
void set_vote_request(Builder b, raft_term t, log_index last_index, raft_term last_term) {
  b.setTerm(t.value());
  b.setLastLogIndex(last_index.value());
  b.setLastLogTerm(last_term.value());
}

struct encoder {
  wire::Builder out;

  void operator()(const pre_vote& m) {
    set_vote_request(out.initPreVote(), m.term, m.last_log_index, m.last_log_term);
  }
  void operator()(const vote& m) {
    auto b = out.initVote();
    set_vote_request(b, m.term, m.last_log_index, m.last_log_term);
    b.setLeadershipTransfer(m.leadership_transfer);
  }
  void operator()(const pre_vote_response& m) {
    auto b = out.initPreVoteResponse();
    b.setTerm(m.term.value());
    b.setGranted(m.granted);
  }
  void operator()(const vote_response& m) {
    auto b = out.initVoteResponse();
    b.setTerm(m.term.value());
    b.setGranted(m.granted);
  }
  void operator()(const append_entries& m) {
    auto b = out.initAppendEntries();
    b.setTerm(m.term.value());
    b.setPrevLogIndex(m.prev_log_index.value());
    b.setPrevLogTerm(m.prev_log_term.value());
    b.setLeaderCommit(m.leader_commit.value());
    b.setRejoinIndex(m.rejoin_index.value());
    auto list = b.initEntries(static_cast<unsigned>(m.entries.size()));
    for (unsigned i = 0; i < m.entries.size(); ++i) set_entry(list[i], m.entries[i]);
  }
  void operator()(const append_entries_response& m) {
    auto b = out.initAppendEntriesResponse();
    b.setTerm(m.term.value());
    b.setSuccess(m.success);
    b.setIndex(m.index.value());
    b.setLastIndex(m.last_index.value());
    b.setConflictTerm(m.conflict_term.value());
    b.setConflictIndex(m.conflict_index.value());
  }
  void operator()(const install_snapshot& m) {
    auto b = out.initInstallSnapshot();
    b.setTerm(m.term.value());
    auto s = b.initSnapshot();
    s.setIndex(m.snap.meta.index.value());
    s.setTerm(m.snap.meta.term.value());
    s.setData(kj::arrayPtr(m.snap.data.data(), m.snap.data.size()));
    if (!m.snap.voters.empty()) {
      const bytes voters = encode_voter_set(m.snap.voters);
      s.setVoters(kj::arrayPtr(voters.data(), voters.size()));
    }
  }
  void operator()(const install_snapshot_response& m) {
    auto b = out.initInstallSnapshotResponse();
    b.setTerm(m.term.value());
    b.setLastIndex(m.last_index.value());
  }
  void operator()(const timeout_now& m) { out.initTimeoutNow().setTerm(m.term.value()); }
  void operator()(const catch_up_request& m) { out.initCatchUpRequest().setTerm(m.term.value()); }
  void operator()(const catch_up_response& m) {
    auto b = out.initCatchUpResponse();
    b.setTerm(m.term.value());
    b.setFresh(m.fresh);
  }
};

result<message_body> decode_append(wire::AppendEntries::Reader r) {
  append_entries m;
  m.term = raft_term{r.getTerm()};
  m.prev_log_index = log_index{r.getPrevLogIndex()};
  m.prev_log_term = raft_term{r.getPrevLogTerm()};
  m.leader_commit = log_index{r.getLeaderCommit()};
  m.rejoin_index = log_index{r.getRejoinIndex()};
  if (m.prev_log_term > m.term) return corrupt("prevLogTerm above the message's term");
  if ((m.prev_log_index == log_index{}) != (m.prev_log_term == raft_term{}))
    return corrupt("prevLogIndex and prevLogTerm must be both 0 or both set");
  auto entries = r.getEntries();
  if (m.prev_log_index.value() > std::numeric_limits<uint64_t>::max() - entries.size())
    return corrupt("entry indexes overflow");
  raft_term previous = m.prev_log_term;
  m.entries.reserve(entries.size());
  for (unsigned i = 0; i < entries.size(); ++i) {
    entry e{raft_term{entries[i].getTerm()}, log_index{entries[i].getIndex()},
            to_bytes(entries[i].getData())};
    if (entries[i].getVoters()) {
      if (auto set = decode_voter_set(e.data); !set)
        return corrupt("entry " + std::to_string(e.index.value()) + ": " + set.err().message);
      e.kind = entry_kind::voters;
    }
    if (e.index != m.prev_log_index + (i + 1))
      return corrupt("entry " + std::to_string(i) + " has index " +
                     std::to_string(e.index.value()) + ", expected " +
                     std::to_string((m.prev_log_index + (i + 1)).value()));
    if (e.term == raft_term{} || e.term < previous || e.term > m.term)
      return corrupt("entry " + std::to_string(e.index.value()) + " has term " +
                     std::to_string(e.term.value()) + " out of order");
    previous = e.term;
    m.entries.push_back(std::move(e));
  }
  return message_body{std::move(m)};
}

result<message_body> decode_snapshot(wire::InstallSnapshot::Reader r) {
  install_snapshot m;
  m.term = raft_term{r.getTerm()};
  auto s = r.getSnapshot();
  m.snap.meta = snapshot_meta{log_index{s.getIndex()}, raft_term{s.getTerm()}};
  m.snap.data = to_bytes(s.getData());
  if (s.getVoters().size() > 0) {
    auto set = decode_voter_set(to_bytes(s.getVoters()));
    if (!set) return corrupt("snapshot: " + set.err().message);
    m.snap.voters = std::move(*set);
  }
  if (m.snap.meta.index == log_index{} || m.snap.meta.term == raft_term{} ||
      m.snap.meta.term > m.term)
    return corrupt("snapshot (" + std::to_string(m.snap.meta.index.value()) + ", term " +
                   std::to_string(m.snap.meta.term.value()) + ") invalid in term " +
                   std::to_string(m.term.value()));
  return message_body{std::move(m)};
}

result<message_body> decode_body(wire::Reader r) {
  switch (r.which()) {
  case wire::PRE_VOTE: {
    auto b = r.getPreVote();
    if (b.getLeadershipTransfer()) return corrupt("a pre-vote cannot be a leadership transfer");
    return message_body{pre_vote{raft_term{b.getTerm()}, log_index{b.getLastLogIndex()},
                                 raft_term{b.getLastLogTerm()}}};
  }
  case wire::VOTE: {
    auto b = r.getVote();
    return message_body{vote{raft_term{b.getTerm()}, log_index{b.getLastLogIndex()},
                             raft_term{b.getLastLogTerm()}, b.getLeadershipTransfer()}};
  }
  case wire::PRE_VOTE_RESPONSE: {
    auto b = r.getPreVoteResponse();
    return message_body{pre_vote_response{raft_term{b.getTerm()}, b.getGranted()}};
  }
  case wire::VOTE_RESPONSE: {
    auto b = r.getVoteResponse();
    return message_body{vote_response{raft_term{b.getTerm()}, b.getGranted()}};
  }
  case wire::APPEND_ENTRIES:
    return decode_append(r.getAppendEntries());
  case wire::APPEND_ENTRIES_RESPONSE: {
    auto b = r.getAppendEntriesResponse();
    return message_body{
        append_entries_response{raft_term{b.getTerm()}, b.getSuccess(), log_index{b.getIndex()},
                                log_index{b.getLastIndex()}, raft_term{b.getConflictTerm()},
                                log_index{b.getConflictIndex()}}};
  }
  case wire::INSTALL_SNAPSHOT:
    return decode_snapshot(r.getInstallSnapshot());
  case wire::INSTALL_SNAPSHOT_RESPONSE: {
    auto b = r.getInstallSnapshotResponse();
    return message_body{
        install_snapshot_response{raft_term{b.getTerm()}, log_index{b.getLastIndex()}}};
  }
  case wire::TIMEOUT_NOW:
    return message_body{timeout_now{raft_term{r.getTimeoutNow().getTerm()}}};
  case wire::CATCH_UP_REQUEST:
    return message_body{catch_up_request{raft_term{r.getCatchUpRequest().getTerm()}}};
  case wire::CATCH_UP_RESPONSE: {
    auto b = r.getCatchUpResponse();
    return message_body{catch_up_response{raft_term{b.getTerm()}, b.getFresh()}};
  }
  }
  return corrupt("unknown message kind " + std::to_string(static_cast<int>(r.which())));
}

// Ascending, distinct, non-negative: a voter set as quorum_identity holds it.
result<std::vector<node_id>> read_voters(capnp::List<int32_t>::Reader list) {
  std::vector<node_id> out;
  for (int32_t v : list) {
    if (v < 0 || (!out.empty() && v <= out.back().value()))
      return corrupt("voters must be ascending node ids >= 0");
    out.push_back(node_id{v});
  }
  if (out.empty()) return corrupt("no voters");
  return out;
}

} // namespace

capnp_frame encode(const message& m, const quorum_identity& quorum) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<wire>();
  root.setFrom(m.from.value());
  root.setTo(m.to.value());
  std::visit(encoder{root}, m.body);
  root.setClusterId(quorum.cluster_id);
  auto voters = root.initVoters(static_cast<unsigned>(quorum.voters.size()));
  for (unsigned i = 0; i < quorum.voters.size(); ++i) voters.set(i, quorum.voters[i].value());
  root.setFromDirectory(data_of(m.from_directory));
  if (m.to_directory != directory_id{}) root.setToDirectory(data_of(m.to_directory));
  root.setCatchingUp(m.catching_up);
  return capnp_frame::from_builder(builder);
}

result<received_frame> decode(const capnp_frame& frame) {
  if (frame.empty()) return corrupt("empty frame");
  auto decoded = frame.try_read<wire>([](wire::Reader r) -> result<received_frame> {
    auto body = decode_body(r);
    if (!body) return body.err();
    auto from_directory = read_directory(r.getFromDirectory(), false, "fromDirectory");
    if (!from_directory) return from_directory.err();
    auto to_directory = read_directory(r.getToDirectory(), true, "toDirectory");
    if (!to_directory) return to_directory.err();
    auto voters = read_voters(r.getVoters());
    if (!voters) return voters.err();
    received_frame out;
    out.msg = message{node_id{r.getFrom()}, node_id{r.getTo()}, std::move(*body),
                      *from_directory,      *to_directory,      r.getCatchingUp()};
    out.quorum = quorum_identity{std::string(r.getClusterId().cStr()), std::move(*voters)};
    return out;
  });
  if (!decoded) return decoded.err();
  return std::move(*decoded);
}

} // namespace capstan::raft
