/*
 * nats_failover: the client of tests/bench/nats_failover.sh, the NATS JetStream counterpart of
 * bench_failover_producer. Built by that script (libnats, the C client cnats):
 *     cc -O2 -Wall -o nats_failover nats_failover.c -lnats
 *
 * Usage:
 *     nats_failover [-g GAP_MS] [-t PUB_TIMEOUT_MS] [-r RETRY_MS] [-d MAX_S] [-x STOP_FILE] URLS
 *     nats_failover -i URLS
 *
 *   URLS   every server of the cluster, comma-separated (nats://127.0.0.1:PORT,...)
 *
 * Publish mode (the default) deletes and recreates the stream FAILOVER (one subject, file
 * storage, 3 replicas), waits until it has a leader and both followers are current, then
 * publishes 100-byte messages with js_Publish, one at a time: the next is sent after the ack of
 * the one before (one in flight, as the capstan producer with acks=all). Errors (a timeout, no
 * responders while the stream has no leader, a lost connection) are counted and the message is
 * sent again after RETRY_MS (default 20). It runs until STOP_FILE exists or MAX_S (default 3600)
 * have passed. Lines on stdout, times in wall-clock milliseconds since the epoch (comparable
 * with `date +%s%3N`):
 *   first ACK_MS                       the first ack
 *   gap PREV_ACK_MS ACK_MS TIMEOUTS NO_RESPONDERS OTHER
 *                                      an ack more than GAP_MS (default 200) after the ack before
 *                                      it: a failover happened between them; the counts are the
 *                                      errors met in between
 *   conn MS URL                        connected (or reconnected) to the server at URL
 *   disconn MS                         the connection was lost
 *   done ACKS ERRORS                   at the end
 *
 * Info mode (-i) prints the stream's state once and exits (1 if it could not be read):
 *   LEADER_NAME REPLICAS CURRENT       e.g. "n2 3 3": the leader counts as current; a follower
 *                                      counts when the leader reports it current
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#define STREAM "FAILOVER"
#define SUBJECT "failover.data"
#define REPLICAS 3
#define PAYLOAD_SIZE 100
#define MAX_URLS 8
/* The stream keeps the newest messages only, so a restarted server catches up on a bounded
 * amount of data however long the run. */
#define STREAM_MAX_MSGS 100000
#define STREAM_READY_TIMEOUT_MS 30000

typedef struct {
    const char *urls[MAX_URLS];
    int nurls;
    int64_t gap_ms;
    int64_t pub_timeout_ms;
    int retry_ms;
    int64_t max_ms;
    const char *stop_file;
    bool info;
} options;

typedef struct {
    int64_t timeouts, no_responders, other;
} error_counts;

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool exists(const char *path) {
    struct stat st;
    return path != NULL && stat(path, &st) == 0;
}

/* stdout is a file read by the script while this runs: every line is flushed at once. The
 * connection callbacks print from the library's thread; stdio locks each call. */
static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    flockfile(stdout);
    vprintf(fmt, ap);
    fflush(stdout);
    funlockfile(stdout);
    va_end(ap);
}

static void fail(const char *what, natsStatus s, jsErrCode ec) {
    fprintf(stderr, "nats_failover: %s: %s (jsErr %d)\n", what, natsStatus_GetText(s), (int)ec);
    exit(1);
}

/* ---- options -------------------------------------------------------------------------------- */

static void usage(void) {
    fprintf(stderr, "usage: nats_failover [-g GAP_MS] [-t PUB_TIMEOUT_MS] [-r RETRY_MS] [-d MAX_S]"
                    " [-x STOP_FILE] URLS\n       nats_failover -i URLS\n");
    exit(2);
}

/* Splits the comma-separated URLS in place (the string is argv's, alive until exit). */
static void split_urls(options *o, char *list) {
    for (char *save = NULL, *u = strtok_r(list, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
        if (o->nurls == MAX_URLS) usage();
        o->urls[o->nurls++] = u;
    }
    if (o->nurls == 0) usage();
}

static options parse_options(int argc, char **argv) {
    options o = {.gap_ms = 200, .pub_timeout_ms = 500, .retry_ms = 20, .max_ms = 3600 * 1000};
    int c;
    while ((c = getopt(argc, argv, "g:t:r:d:x:i")) != -1) {
        switch (c) {
        case 'g': o.gap_ms = atoll(optarg); break;
        case 't': o.pub_timeout_ms = atoll(optarg); break;
        case 'r': o.retry_ms = atoi(optarg); break;
        case 'd': o.max_ms = atoll(optarg) * 1000; break;
        case 'x': o.stop_file = optarg; break;
        case 'i': o.info = true; break;
        default: usage();
        }
    }
    if (optind != argc - 1 || o.pub_timeout_ms <= 0 || o.retry_ms < 0) usage();
    split_urls(&o, argv[optind]);
    return o;
}

/* ---- connection ----------------------------------------------------------------------------- */

static void print_connected(natsConnection *nc) {
    char url[256] = "";
    natsConnection_GetConnectedUrl(nc, url, sizeof url);
    emit("conn %lld %s\n", (long long)wall_ms(), url);
}

static void on_reconnected(natsConnection *nc, void *closure) {
    (void)closure;
    print_connected(nc);
}

static void on_disconnected(natsConnection *nc, void *closure) {
    (void)nc; (void)closure;
    emit("disconn %lld\n", (long long)wall_ms());
}

/* One connection that may land on any server of the list. The publisher reconnects without
 * limit and without jitter; the reconnect wait (the library's default is 2 s) applies only to a
 * server tried less than that long ago, so a short one never delays the move to a surviving
 * server, and still keeps the loop from spinning if none answers. The time to reach another
 * server after its own was killed is part of the failover. The info query does not reconnect:
 * the script retries it. */
static natsConnection *connect_all(const options *o, bool publisher) {
    natsOptions *no = NULL;
    natsConnection *nc = NULL;
    natsStatus s = natsOptions_Create(&no);
    /* The prototype lacks a const; the library copies the strings. */
    if (s == NATS_OK) s = natsOptions_SetServers(no, (const char **)o->urls, o->nurls);
    if (s == NATS_OK) s = natsOptions_SetTimeout(no, 2000);
    if (s == NATS_OK && publisher) s = natsOptions_SetMaxReconnect(no, -1);
    if (s == NATS_OK && publisher) s = natsOptions_SetReconnectWait(no, 50);
    if (s == NATS_OK && publisher) s = natsOptions_SetReconnectJitter(no, 0, 0);
    if (s == NATS_OK && publisher) s = natsOptions_SetReconnectedCB(no, on_reconnected, NULL);
    if (s == NATS_OK && publisher) s = natsOptions_SetDisconnectedCB(no, on_disconnected, NULL);
    if (s == NATS_OK && !publisher) s = natsOptions_SetAllowReconnect(no, false);
    if (s == NATS_OK) s = natsConnection_Connect(&nc, no);
    natsOptions_Destroy(no);
    if (s != NATS_OK) fail("connect", s, 0);
    return nc;
}

static jsCtx *jetstream(natsConnection *nc, int64_t wait_ms) {
    jsOptions jo;
    jsCtx *js = NULL;
    jsOptions_Init(&jo);
    jo.Wait = wait_ms;
    natsStatus s = natsConnection_JetStream(&js, nc, &jo);
    if (s != NATS_OK) fail("JetStream context", s, 0);
    return js;
}

/* ---- stream --------------------------------------------------------------------------------- */

typedef struct {
    char leader[64]; /* empty while the stream has no leader */
    int replicas;    /* leader + followers the leader knows of */
    int current;     /* the leader + followers the leader reports current */
} stream_state;

static bool read_stream_state(jsCtx *js, stream_state *st) {
    jsStreamInfo *si = NULL;
    jsErrCode ec = 0;
    memset(st, 0, sizeof *st);
    if (js_GetStreamInfo(&si, js, STREAM, NULL, &ec) != NATS_OK || si == NULL) return false;
    const jsClusterInfo *ci = si->Cluster;
    if (ci != NULL && ci->Leader != NULL && ci->Leader[0] != '\0') {
        snprintf(st->leader, sizeof st->leader, "%s", ci->Leader);
        st->replicas = 1 + ci->ReplicasLen;
        st->current = 1;
        for (int i = 0; i < ci->ReplicasLen; i++)
            if (ci->Replicas[i]->Current) st->current++;
    }
    jsStreamInfo_Destroy(si);
    return true;
}

/* A fresh stream per run: no messages or raft state left from an earlier one. Creating right
 * after the cluster formed can fail while the meta group settles, hence the retries. */
static void recreate_stream(jsCtx *js) {
    jsErrCode ec = 0;
    natsStatus s = js_DeleteStream(js, STREAM, NULL, &ec);
    if (s != NATS_OK && s != NATS_NOT_FOUND && ec != JSStreamNotFoundErr)
        fail("delete stream", s, ec);

    const char *subjects[] = {SUBJECT};
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = STREAM;
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Retention = js_LimitsPolicy;
    cfg.Replicas = REPLICAS;
    cfg.MaxMsgs = STREAM_MAX_MSGS;
    for (int attempt = 1;; attempt++) {
        jsStreamInfo *si = NULL;
        ec = 0;
        s = js_AddStream(&si, js, &cfg, NULL, &ec);
        jsStreamInfo_Destroy(si);
        if (s == NATS_OK) return;
        if (attempt == 20) fail("create stream", s, ec);
        sleep_ms(500);
    }
}

static void wait_stream_ready(jsCtx *js) {
    int64_t deadline = mono_ms() + STREAM_READY_TIMEOUT_MS;
    stream_state st;
    while (!read_stream_state(js, &st) || st.replicas != REPLICAS || st.current != REPLICAS) {
        if (mono_ms() > deadline) fail("waiting for the stream's replicas", NATS_TIMEOUT, 0);
        sleep_ms(100);
    }
}

/* ---- modes ---------------------------------------------------------------------------------- */

static int print_info(const options *o) {
    natsConnection *nc = connect_all(o, false);
    jsCtx *js = jetstream(nc, 2000);
    stream_state st;
    bool ok = read_stream_state(js, &st);
    if (ok) printf("%s %d %d\n", st.leader[0] ? st.leader : "-", st.replicas, st.current);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return ok ? 0 : 1;
}

static void count_error(error_counts *e, natsStatus s) {
    if (s == NATS_TIMEOUT)
        e->timeouts++;
    else if (s == NATS_NO_RESPONDERS)
        e->no_responders++;
    else
        e->other++;
}

static int publish(const options *o) {
    natsConnection *nc = connect_all(o, true);
    print_connected(nc);
    jsCtx *js = jetstream(nc, o->pub_timeout_ms);
    recreate_stream(js);
    wait_stream_ready(js);

    char payload[PAYLOAD_SIZE];
    memset(payload, 'x', sizeof payload);
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = o->pub_timeout_ms;

    error_counts since_ack = {0};
    int64_t last_ack = 0, acks = 0, errors = 0;
    const int64_t end = mono_ms() + o->max_ms;
    while (!exists(o->stop_file) && mono_ms() < end) {
        jsPubAck *pa = NULL;
        jsErrCode ec = 0;
        natsStatus s = js_Publish(&pa, js, SUBJECT, payload, sizeof payload, &po, &ec);
        const int64_t now = wall_ms();
        jsPubAck_Destroy(pa);
        if (s != NATS_OK) {
            count_error(&since_ack, s);
            errors++;
            sleep_ms(o->retry_ms);
            continue;
        }
        if (last_ack == 0)
            emit("first %lld\n", (long long)now);
        else if (now - last_ack > o->gap_ms)
            emit("gap %lld %lld %lld %lld %lld\n", (long long)last_ack, (long long)now,
                 (long long)since_ack.timeouts, (long long)since_ack.no_responders,
                 (long long)since_ack.other);
        last_ack = now;
        acks++;
        memset(&since_ack, 0, sizeof since_ack);
    }
    emit("done %lld %lld\n", (long long)acks, (long long)errors);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}

int main(int argc, char **argv) {
    options o = parse_options(argc, argv);
    natsStatus s = nats_Open(-1);
    if (s != NATS_OK) fail("nats_Open", s, 0);
    int rc = o.info ? print_info(&o) : publish(&o);
    nats_Close();
    return rc;
}
