/*
 * The keyed workload of perf_rf3.sh (MODES=keyed) run against NATS JetStream, for a figure
 * beside capstan's from the same machine and run (nats_keyed.sh starts the servers).
 *
 * One stream KEYED of REPLICAS replicas (file storage) takes the subjects keyed.>; a key is a
 * subject, as a key is a partition's in Kafka: record i carries key i % KEYS and goes to subject
 * keyed.<key % SUBJECTS>. PUBLISHERS threads, each on a connection of its own to the stream
 * leader's server (as a producer talks to a partition's leader), publish records index,
 * index + PUBLISHERS, ... of RECORDS with js_PublishAsync, at most MAX_PENDING un-acked each.
 * The clock runs from the moment every publisher is connected and warmed up to the last ack;
 * only positive acks count. Then the same RECORDS go, without keys, from one publisher to one
 * subject of a fresh stream, for the ratio of the two (perf_rf3.sh's single partition).
 *
 * Prints "keyed MSGS_PER_S ACKED STORED" and "single MSGS_PER_S ACKED STORED" on stdout.
 *
 * Usage: nats_keyed [-n RECORDS] [-p PUBLISHERS] [-S SUBJECTS] [-k KEYS] [-s SIZE]
 *                   [-m MAX_PENDING] [-r REPLICAS] [-w WARMUP] URL[,URL...]
 * URL,...: every server, "NAME=nats://host:port" so that the leader's is found by name.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#define STREAM "KEYED"
#define MAX_SERVERS 8
#define MAX_PUBLISHERS 64

static int64_t records = 1000000;
static int publishers = 4;
static int subjects = 100;
static int keys = 10000;
static int size = 100;
static int max_pending = 1000;
static int replicas = 3;
static int warmup = 1000;

static struct { char name[64]; char url[256]; } servers[MAX_SERVERS];
static int nservers;
static int64_t acks_ok, acks_err;

static void die(const char *what, natsStatus s, jsErrCode ec) {
  fprintf(stderr, "nats_keyed: %s: %s (jsErr %d)\n", what, natsStatus_GetText(s), (int)ec);
  exit(1);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static natsConnection *connect_to(const char *url) {
  natsOptions *o = NULL;
  natsConnection *nc = NULL;
  natsStatus s = natsOptions_Create(&o);
  if (s == NATS_OK) s = natsOptions_SetURL(o, url);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(o, false);
  if (s == NATS_OK) s = natsOptions_SetTimeout(o, 5000);
  if (s == NATS_OK) s = natsConnection_Connect(&nc, o);
  natsOptions_Destroy(o);
  if (s != NATS_OK) die("connect", s, 0);
  return nc;
}

static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
  (void)js;
  (void)closure;
  if (pa != NULL) {
    __atomic_fetch_add(&acks_ok, 1, __ATOMIC_RELAXED);
  } else if (__atomic_fetch_add(&acks_err, 1, __ATOMIC_RELAXED) < 5 && pae != NULL) {
    fprintf(stderr, "nats_keyed: publish not acknowledged: %s (jsErr %d)\n", natsStatus_GetText(pae->Err),
            (int)pae->ErrCode);
  }
  natsMsg_Destroy(msg);
}

static jsCtx *js_for(natsConnection *nc) {
  jsOptions jo;
  jsCtx *js = NULL;
  jsOptions_Init(&jo);
  jo.Wait = 10000;
  jo.PublishAsync.MaxPending = max_pending;
  jo.PublishAsync.AckHandler = on_ack;
  jo.PublishAsync.StallWait = 60000;
  natsStatus s = natsConnection_JetStream(&js, nc, &jo);
  if (s != NATS_OK) die("natsConnection_JetStream", s, 0);
  return js;
}

/* Deletes and creates the stream on `subject`, waits (at most 20 s) until it has a leader and
 * every replica is current, and returns the URL of the leader's server. */
static const char *recreate_stream(jsCtx *admin, const char *subject) {
  jsErrCode ec = 0;
  natsStatus s = js_DeleteStream(admin, STREAM, NULL, &ec);
  if (s != NATS_OK && ec != JSStreamNotFoundErr && s != NATS_NOT_FOUND) die("js_DeleteStream", s, ec);
  jsStreamConfig cfg;
  const char *subjs[] = {subject};
  jsStreamConfig_Init(&cfg);
  cfg.Name = STREAM;
  cfg.Subjects = subjs;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  cfg.Replicas = replicas;
  jsStreamInfo *si = NULL;
  for (int attempt = 0;; attempt++) {
    ec = 0;
    s = js_AddStream(&si, admin, &cfg, NULL, &ec);
    if (s == NATS_OK) break;
    if (attempt >= 20) die("js_AddStream", s, ec);
    usleep(500 * 1000);
  }
  jsStreamInfo_Destroy(si);
  const int64_t deadline = now_ns() + 20LL * 1000000000LL;
  for (;;) {
    si = NULL;
    ec = 0;
    const char *url = NULL;
    if (js_GetStreamInfo(&si, admin, STREAM, NULL, &ec) == NATS_OK && si != NULL) {
      if (replicas == 1 && (si->Cluster == NULL || si->Cluster->Leader == NULL)) {
        url = servers[0].url;
      } else if (si->Cluster != NULL && si->Cluster->Leader != NULL && si->Cluster->Leader[0] != '\0' &&
                 si->Cluster->ReplicasLen == replicas - 1) {
        bool current = true;
        for (int i = 0; i < si->Cluster->ReplicasLen; i++) current = current && si->Cluster->Replicas[i]->Current;
        for (int i = 0; current && i < nservers; i++)
          if (strcmp(servers[i].name, si->Cluster->Leader) == 0) url = servers[i].url;
      }
    }
    jsStreamInfo_Destroy(si);
    if (url != NULL) return url;
    if (now_ns() > deadline) die("waiting for the stream's leader and replicas", NATS_TIMEOUT, 0);
    usleep(100 * 1000);
  }
}

static uint64_t stream_msgs(jsCtx *admin) {
  jsStreamInfo *si = NULL;
  jsErrCode ec = 0;
  natsStatus s = js_GetStreamInfo(&si, admin, STREAM, NULL, &ec);
  if (s != NATS_OK) die("js_GetStreamInfo", s, ec);
  const uint64_t n = si->State.Msgs;
  jsStreamInfo_Destroy(si);
  return n;
}

static void complete(jsCtx *js) {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 120000;
  natsStatus s = js_PublishAsyncComplete(js, &po);
  if (s != NATS_OK) die("js_PublishAsyncComplete", s, 0);
}

struct publisher {
  int index, count; /* publisher `index` of `count` */
  bool keyed;
  const char *url;
  pthread_barrier_t *warmed, *go;
  int64_t done_ns;
};

static void *publish(void *arg) {
  struct publisher *p = arg;
  natsConnection *nc = connect_to(p->url);
  jsCtx *js = js_for(nc);
  char *value = malloc(size);
  for (int i = 0; i < size; i++) value[i] = (char)('a' + (i * 7 + p->index) % 26);
  char subject[64];
  for (int i = 0; i < warmup; i++) {
    if (p->keyed) snprintf(subject, sizeof subject, "keyed.%d", i % subjects);
    natsStatus s = js_PublishAsync(js, p->keyed ? subject : "single", value, size, NULL);
    if (s != NATS_OK) die("js_PublishAsync (warm-up)", s, 0);
  }
  complete(js);
  /* Publisher 0 purges the warm-up once all are done with it; the clock starts after that. */
  pthread_barrier_wait(p->warmed);
  pthread_barrier_wait(p->go);
  for (int64_t i = p->index; i < records; i += p->count) {
    const int key = (int)(i % keys);
    if (p->keyed) snprintf(subject, sizeof subject, "keyed.%d", key % subjects);
    natsStatus s = js_PublishAsync(js, p->keyed ? subject : "single", value, size, NULL);
    if (s != NATS_OK) die("js_PublishAsync", s, 0);
  }
  complete(js);
  p->done_ns = now_ns();
  free(value);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return NULL;
}

static void run(const char *label, jsCtx *admin, bool keyed, int count) {
  const char *url = recreate_stream(admin, keyed ? "keyed.>" : "single");
  pthread_barrier_t warmed, go;
  pthread_barrier_init(&warmed, NULL, count + 1);
  pthread_barrier_init(&go, NULL, count + 1);
  struct publisher ps[MAX_PUBLISHERS];
  pthread_t threads[MAX_PUBLISHERS];
  for (int i = 0; i < count; i++) {
    ps[i] = (struct publisher){i, count, keyed, url, &warmed, &go, 0};
    if (pthread_create(&threads[i], NULL, publish, &ps[i]) != 0) die("pthread_create", NATS_ERR, 0);
  }
  pthread_barrier_wait(&warmed);
  jsErrCode ec = 0;
  natsStatus s = js_PurgeStream(admin, STREAM, NULL, &ec);
  if (s != NATS_OK) die("js_PurgeStream", s, ec);
  __atomic_store_n(&acks_ok, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&acks_err, 0, __ATOMIC_SEQ_CST);
  const int64_t start = now_ns();
  pthread_barrier_wait(&go);
  int64_t end = start;
  for (int i = 0; i < count; i++) {
    pthread_join(threads[i], NULL);
    if (ps[i].done_ns > end) end = ps[i].done_ns;
  }
  pthread_barrier_destroy(&warmed);
  pthread_barrier_destroy(&go);
  const int64_t ok = __atomic_load_n(&acks_ok, __ATOMIC_SEQ_CST);
  const uint64_t stored = stream_msgs(admin);
  printf("%s %.0f %" PRId64 " %" PRIu64 "\n", label, ok / ((end - start) / 1e9), ok, stored);
  fflush(stdout);
  if (__atomic_load_n(&acks_err, __ATOMIC_SEQ_CST) > 0 || (int64_t)stored != ok) {
    fprintf(stderr, "nats_keyed: %s: %" PRId64 " acknowledged, %" PRId64 " refused, %" PRIu64 " stored\n", label,
            ok, acks_err, stored);
    exit(1);
  }
}

static int positive(const char *flag, const char *v) {
  char *end = NULL;
  const long n = strtol(v, &end, 10);
  if (end == v || *end != '\0' || n <= 0) {
    fprintf(stderr, "nats_keyed: %s must be a positive number, not '%s'\n", flag, v);
    exit(2);
  }
  return (int)n;
}

int main(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "n:p:S:k:s:m:r:w:")) != -1) {
    switch (opt) {
    case 'n': records = positive("-n", optarg); break;
    case 'p': publishers = positive("-p", optarg); break;
    case 'S': subjects = positive("-S", optarg); break;
    case 'k': keys = positive("-k", optarg); break;
    case 's': size = positive("-s", optarg); break;
    case 'm': max_pending = positive("-m", optarg); break;
    case 'r': replicas = positive("-r", optarg); break;
    case 'w': warmup = positive("-w", optarg); break;
    default:
      fprintf(stderr, "usage: %s [-n RECORDS] [-p PUBLISHERS] [-S SUBJECTS] [-k KEYS] [-s SIZE] [-m MAX_PENDING] "
                      "[-r REPLICAS] [-w WARMUP] NAME=URL[,NAME=URL...]\n", argv[0]);
      return 2;
    }
  }
  if (optind + 1 != argc || publishers > MAX_PUBLISHERS) {
    fprintf(stderr, "nats_keyed: one list of servers (NAME=URL,...) and at most %d publishers\n", MAX_PUBLISHERS);
    return 2;
  }
  char *list = strdup(argv[optind]);
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && nservers < MAX_SERVERS;
       tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    if (eq == NULL) {
      fprintf(stderr, "nats_keyed: '%s' is not NAME=URL\n", tok);
      return 2;
    }
    *eq = '\0';
    snprintf(servers[nservers].name, sizeof servers[nservers].name, "%s", tok);
    snprintf(servers[nservers].url, sizeof servers[nservers].url, "%s", eq + 1);
    nservers++;
  }
  free(list);
  natsConnection *nc = connect_to(servers[0].url);
  jsCtx *admin = NULL;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 10000;
  natsStatus s = natsConnection_JetStream(&admin, nc, &jo);
  if (s != NATS_OK) die("natsConnection_JetStream", s, 0);
  run("keyed", admin, true, publishers);
  run("single", admin, false, 1);
  jsErrCode ec = 0;
  (void)js_DeleteStream(admin, STREAM, NULL, &ec);
  jsCtx_Destroy(admin);
  natsConnection_Destroy(nc);
  nats_Close();
  return 0;
}
