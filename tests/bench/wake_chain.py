"""The crossings of one acks=all round trip, from scheduler events (wake_chain.sh runs it).

Usage: wake_chain.py ROLES SCHED_TXT [floor]

ROLES: one line per thread, "kind pid tid name context_switches waits_in_epoll" (kind: node or
client). SCHED_TXT: `perf script -F tid,cpu,time,event,trace` of sched:sched_waking and
sched:sched_switch. A record starts when the client's RPC thread wakes its caller with the
previous acknowledgement; within it, each crossing below is the first wake-up of its kind after
the one before. The second follower's crossings run beside the first's and are not on the list:
the leader answers once both fetched, which the "answer" crossing includes.

With `floor`, the threads are bench_hop_floor's (--caf --io-worker): its client is one thread,
which does its own socket I/O (the role of capstan's client RPC thread, and there is no caller),
and its leader's thread that reads the client plays the leader RPC thread; a record starts when
that thread writes the answer to the client.
"""

import collections
import re
import statistics
import sys


def roles_of(path, floor):
    """tid -> role, e.g. L.rpc, F1.mux, F2.w1, C.caller."""
    rows = [line.split() for line in open(path) if line.strip()]
    by_pid = collections.defaultdict(list)
    for kind, pid, tid, name, cs, epoll in rows:
        by_pid[(kind, pid)].append((int(tid), name, int(cs), epoll == "1"))
    nodes = []
    roles = {}
    for (kind, pid), threads in by_pid.items():
        if kind == "client":
            for tid, name, cs, epoll in threads:
                if tid == int(pid):
                    roles[tid] = "C.rpc" if floor else "C.caller"
                elif epoll and name == "capstan":
                    roles[tid] = "C.rpc"
            continue
        named = {}
        if floor:
            rpc = [t for t in threads if t[0] == int(pid)]
        else:
            rpc = [t for t in threads if t[1] == "capstan" and t[3]]
        if rpc:
            named["rpc"] = max(rpc, key=lambda t: t[2])
        mux = [t for t in threads if t[1] == "caf.multiplexer" and t[3]]
        if mux:
            named["mux"] = max(mux, key=lambda t: t[2])
        workers = sorted((t for t in threads if t[1] == "caf.multiplexer" and not t[3]),
                         key=lambda t: -t[2])[:2]
        for i, t in enumerate(workers):
            named["w%d" % (i + 1)] = t
        io = [t for t in threads if t[1] == "caf.actor"]
        if io:
            named["io"] = max(io, key=lambda t: t[2])
        nodes.append((named.get("rpc", (0, "", 0, False))[2], named))
    nodes.sort(key=lambda n: -n[0])  # the leader's RPC thread answers every produce
    for i, (_, named) in enumerate(nodes):
        prefix = "L" if i == 0 else "F%d" % i
        for role, t in named.items():
            roles[t[0]] = prefix + "." + role
    return roles


IDLE_CPU = "another, idle CPU"


def events_of(path, roles):
    """(time, 'wake' | 'run', waker role or None, target role, where), in time order; `where`
    (wake-ups only) is the CPU the thread was woken on: the waker's, another idle one, or
    another busy one."""
    line_re = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$")
    events = []
    idle = {}  # cpu -> whether it runs the idle task
    for line in open(path):
        m = line_re.match(line)
        if not m:
            continue
        tid, cpu, ts = int(m.group(1)), int(m.group(2)), float(m.group(3))
        kind, rest = m.group(4), m.group(5)
        if kind == "sched_waking":
            target = int(re.search(r" pid=(\d+)", rest).group(1))
            if target in roles:
                on = int(re.search(r"target_cpu=(\d+)", rest).group(1))
                where = "the waker's CPU" if on == cpu else (
                    IDLE_CPU if idle.get(on, False) else "another, busy CPU")
                events.append((ts, "wake", roles.get(tid, "other"), roles[target], where))
        elif kind == "sched_switch":
            target = int(re.search(r"next_pid=(\d+)", rest).group(1))
            idle[cpu] = target == 0
            if target in roles:
                events.append((ts, "run", None, roles[target], None))
    return events


def follower(r):
    return r.startswith("F")


def same_node(a, b):
    return a.split(".")[0] == b.split(".")[0]


def worker(r):
    return r.split(".")[1] in ("w1", "w2")


# On the path in order; each is (what it is, test on waker and target).
CROSSINGS = [
    ("client RPC thread -> leader RPC thread (the request)", lambda w, t: w == "C.rpc" and t == "L.rpc"),
    ("leader RPC thread -> leader worker", lambda w, t: w == "L.rpc" and t.startswith("L.w")),
    ("leader worker -> leader I/O worker (the append)", lambda w, t: w.startswith("L.w") and t == "L.io"),
    ("leader worker -> leader multiplexer (fetch answers)", lambda w, t: w.startswith("L.w") and t == "L.mux"),
    ("leader multiplexer -> a follower's multiplexer", lambda w, t: w == "L.mux" and follower(t) and t.endswith(".mux")),
    ("follower multiplexer -> its worker", lambda w, t: follower(w) and w.endswith(".mux") and worker(t) and same_node(w, t)),
    ("follower worker -> its I/O worker (the append)", lambda w, t: follower(w) and worker(w) and t.endswith(".io") and same_node(w, t)),
    ("follower I/O worker -> its worker", lambda w, t: follower(w) and w.endswith(".io") and worker(t) and same_node(w, t)),
    ("follower worker -> its multiplexer (next fetch)", lambda w, t: follower(w) and worker(w) and t.endswith(".mux") and same_node(w, t)),
    ("follower multiplexer -> leader multiplexer", lambda w, t: follower(w) and w.endswith(".mux") and t == "L.mux"),
]
# Found backwards from the record's end: the answer waits for the second follower.
ANSWER = [
    ("leader worker -> leader RPC thread (the answer)", lambda w, t: w.startswith("L.w") and t == "L.rpc"),
    ("leader RPC thread -> client RPC thread", lambda w, t: w == "L.rpc" and t == "C.rpc"),
    ("client RPC thread -> caller (the acknowledgement)", lambda w, t: w == "C.rpc" and t == "C.caller"),
]


def records_of(events, boundary):
    records, current = [], None
    for e in events:
        ack = e[1] == "wake" and (e[2], e[3]) == boundary
        if current is not None:
            current.append(e)
        if ack:
            if current is not None:
                records.append(current)
            current = [e]
    return records


def crossing_times(record, answer):
    """[(crossing, time)] for a record that has every crossing in order, else None."""
    wakes = [e for e in record[1:] if e[1] == "wake"]
    found, i = [], 0
    for name, test in CROSSINGS:
        while i < len(wakes) and not test(wakes[i][2], wakes[i][3]):
            i += 1
        if i == len(wakes):
            return None
        found.append((name, wakes[i][0]))
        i += 1
    tail, j = [], len(wakes) - 1
    for name, test in reversed(answer):
        while j >= i and not test(wakes[j][2], wakes[j][3]):
            j -= 1
        if j < i:
            return None
        tail.append((name, wakes[j][0]))
        j -= 1
    return found + list(reversed(tail))


def main():
    floor = len(sys.argv) > 3 and sys.argv[3] == "floor"
    roles = roles_of(sys.argv[1], floor)
    events = events_of(sys.argv[2], roles)
    # The floor's client has no caller: its record ends when the answer reaches it.
    answer = ANSWER[:2] if floor else ANSWER
    records = records_of(events, ("L.rpc", "C.rpc") if floor else ("C.rpc", "C.caller"))
    if not records:
        sys.exit("wake_chain.py: no acknowledged record in the events (roles: %s)" % sorted(roles.values()))
    since_start = collections.defaultdict(list)
    since_previous = collections.defaultdict(list)
    complete = 0
    for record in records:
        times = crossing_times(record, answer)
        if times is None:
            continue
        complete += 1
        previous = record[0][0]
        for name, t in times:
            since_start[name].append((t - record[0][0]) * 1e6)
            since_previous[name].append((t - previous) * 1e6)
            previous = t
    periods = [(b[0][0] - a[0][0]) * 1e6 for a, b in zip(records, records[1:])]
    print("records: %d, %d with every crossing; median record %.0f us" %
          (len(records), complete, statistics.median(periods)))
    print("%-55s %8s %8s" % ("crossing (the waker wakes the next thread)", "at, us", "+us"))
    for name, _ in CROSSINGS + answer:
        if since_start[name]:
            print("%-55s %8.0f %8.0f" % (name, statistics.median(since_start[name]),
                                          statistics.median(since_previous[name])))
    wakes = collections.Counter(e[3] for r in records for e in r[1:] if e[1] == "wake")
    print("wake-ups per record, by thread: " + ", ".join(
        "%s %.2f" % (k, v / len(records)) for k, v in sorted(wakes.items())))
    print("total %.1f" % (sum(wakes.values()) / len(records)))
    # (thread, the CPU it was woken on, microseconds until it ran) for every wake-up that ran.
    waits, pending = [], {}
    for ts, kind, _, target, where in events:
        if kind == "wake":
            pending.setdefault(target, (ts, where))
        elif target in pending:
            woken, where = pending.pop(target)
            waits.append((target, where, (ts - woken) * 1e6))
    by_thread, by_place = collections.defaultdict(list), collections.defaultdict(list)
    for target, where, us in waits:
        by_thread[target].append((where, us))
        by_place[where].append(us)
    print("woken -> running, median us: " + ", ".join(
        "%s %.0f" % (k, statistics.median(us for _, us in v)) for k, v in sorted(by_thread.items())))
    print("woken on another, idle CPU, by thread: " + ", ".join(
        "%s %.0f%%" % (k, 100.0 * sum(w == IDLE_CPU for w, _ in v) / len(v))
        for k, v in sorted(by_thread.items())))
    print("woken -> running by the CPU woken on: " + ", ".join(
        "%s %.0f%% of wake-ups, median %.0f us" % (k, 100.0 * len(v) / len(waits), statistics.median(v))
        for k, v in sorted(by_place.items())))

if __name__ == "__main__":
    main()
