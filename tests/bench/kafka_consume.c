/* Reads RECORDS records of one partition from the beginning with librdkafka's consumer, counting
 * them without printing, and prints records/s as `capstan perf consume` does. The clock runs
 * from the first record to the last: librdkafka's start-up (its offset query waits on a 500 ms
 * timer when it starts before it knows the partition's leader) and the fetch long poll after
 * the last record are not the fetch path's cost. Built by tests/bench/kafka_vs_native.sh. */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s BOOTSTRAP TOPIC RECORDS\n", argv[0]);
    return 2;
  }
  const long long want = atoll(argv[3]);
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], err, sizeof err) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, argv[2], NULL);
  double start = 0, last = now();
  if (rd_kafka_consume_start(rkt, 0, RD_KAFKA_OFFSET_BEGINNING) == -1) {
    fprintf(stderr, "consume_start: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
    return 1;
  }
  static rd_kafka_message_t* batch[10000];
  long long records = 0, payload = 0;
  /* A run that stalls for 10 s stops, as `capstan perf consume` does by default. */
  while (records < want && now() - last < 10.0) {
    ssize_t n = rd_kafka_consume_batch(rkt, 0, 1000, batch, 10000);
    if (n < 0) {
      fprintf(stderr, "consume: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
      return 1;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (batch[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ++records;
        payload += (long long)batch[i]->len + (long long)batch[i]->key_len;
        last = now();
        if (records == 1) start = last;
      } else if (batch[i]->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(batch[i]));
        return 1;
      }
      rd_kafka_message_destroy(batch[i]);
    }
  }
  const double secs = last - start;
  printf("%lld records received, %.1f records/sec (%.2f MB/sec)\n", records, (double)records / secs,
         (double)payload / 1048576.0 / secs);
  rd_kafka_consume_stop(rkt, 0);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  return records < want ? 1 : 0;
}
