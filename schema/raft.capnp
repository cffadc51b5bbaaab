@0x84de403d793f0a22;
# Messages between the controllers of the Raft quorum (docs/controller.md). One RaftMessage per
# frame; terms and indexes are Raft's (0 = none), node ids the cluster's. The codec
# (actors/controller/raft/raft_codec) validates what a peer sends before the core sees it; the
# receiver refuses a frame of another cluster or voter set, or for another incarnation of itself
# (docs/controller.md, "Quorum identity").

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("capstan::schema");

struct RaftEntry {
  term @0 :UInt64;
  index @1 :UInt64;
  data @2 :Data;       # a metadata record; empty for a new leader's no-op
  voters @3 :Bool;     # data is a voter set instead (docs/controller.md, "Voter changes")
}

struct RaftSnapshot {
  index @0 :UInt64;    # last index covered
  term @1 :UInt64;     # term of that entry
  data @2 :Data;       # the state machine's image
  voters @3 :Data;     # the voter set in effect at index; empty: the bootstrap voters
}

struct RaftMessage {
  from @0 :Int32;
  to @1 :Int32;
  union {
    preVote @2 :VoteRequest;
    preVoteResponse @3 :VoteResponse;
    vote @4 :VoteRequest;
    voteResponse @5 :VoteResponse;
    appendEntries @6 :AppendEntries;
    appendEntriesResponse @7 :AppendEntriesResponse;
    installSnapshot @8 :InstallSnapshot;
    installSnapshotResponse @9 :InstallSnapshotResponse;
    timeoutNow @10 :TimeoutNow;
    catchUpRequest @16 :CatchUpRequest;
    catchUpResponse @17 :CatchUpResponse;
  }

  clusterId @11 :Text;         # the sender's cluster
  voters @12 :List(Int32);     # the sender's voter set (--controller-quorum), ascending
  fromDirectory @13 :Data;     # the sender's directory id (16 bytes)
  toDirectory @14 :Data;       # the receiver's, as the sender knows it: 16 bytes, or empty
  catchingUp @15 :Bool;        # the sender lost or damaged its stored state and has not caught up

  # PreVote and Vote carry the same fields.
  struct VoteRequest {
    term @0 :UInt64;
    lastLogIndex @1 :UInt64;
    lastLogTerm @2 :UInt64;
    leadershipTransfer @3 :Bool;  # Vote only: the sender was told to by a leader handing over
  }

  struct VoteResponse {
    term @0 :UInt64;
    granted @1 :Bool;
  }

  struct AppendEntries {
    term @0 :UInt64;
    prevLogIndex @1 :UInt64;
    prevLogTerm @2 :UInt64;
    entries @3 :List(RaftEntry);
    leaderCommit @4 :UInt64;
    rejoinIndex @5 :UInt64;    # to a catching-up follower: whole once this entry is committed
  }

  struct AppendEntriesResponse {
    term @0 :UInt64;
    success @1 :Bool;
    index @2 :UInt64;          # matched through (success) or the refused prevLogIndex
    lastIndex @3 :UInt64;      # the follower's last index
    conflictTerm @4 :UInt64;   # refused: the follower's term at index, 0 if its log ends before
    conflictIndex @5 :UInt64;  # refused: the first index of conflictTerm in its log
  }

  struct InstallSnapshot {
    term @0 :UInt64;
    snapshot @1 :RaftSnapshot;
  }

  struct InstallSnapshotResponse {
    term @0 :UInt64;
    lastIndex @1 :UInt64;
  }

  # A catching-up voter that knows no leader asks every voter where it stands.
  struct CatchUpRequest {
    term @0 :UInt64;
  }

  struct CatchUpResponse {
    term @0 :UInt64;
    fresh @1 :Bool;            # the responder was never in a term above 0 nor held an entry
  }
}

# A leader handing over its leadership tells the follower it chose to start an election now.
struct TimeoutNow {
  term @0 :UInt64;
}
