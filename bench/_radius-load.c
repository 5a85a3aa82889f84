/*
 * The RADIUS bench's load generator (bench/radius.ts), in C so that the client costs the two shared
 * cores as little as a NAS on another machine would: a few system calls per request, no garbage
 * collector, no event-loop turn per answer. radclient (freeradius-utils) can keep packets in flight
 * but reports no latencies, so this plays radperf's part.
 *
 * It sends datagrams built beforehand by the bench (with Gatehouse's codec: Message-Authenticator,
 * hidden User-Password, a fresh Request Authenticator each) over OUTSTANDING sockets, one request
 * outstanding per socket, each sending its next request as soon as its answer arrives, for SECONDS.
 * It checks nothing itself: every answer is written out with its request's index and latency, and
 * the bench checks them all (Access-Accept, Response Authenticator) after the run.
 *
 *   _radius-load PORT OUTSTANDING SECONDS REQUESTS-FILE ANSWERS-FILE [cycle]
 *
 * REQUESTS-FILE: datagrams, each as a 2-octet big-endian length and its octets. ANSWERS-FILE (written):
 * per answer a 4-octet little-endian request index, an 8-octet little-endian double latency in ms, a
 * 2-octet little-endian length and the answer's octets. A request left unanswered for 3 s is counted
 * as lost (written with length 0) and its socket moves on. Exit 0; 2 when the requests ran out
 * before SECONDS. It prints the seconds it ran and the CPU seconds it used. With `cycle` the requests are sent round again (for the echo baseline, which keeps
 * no duplicate cache).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_OUTSTANDING 256
#define TIMEOUT_MS 3000.0

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) {
    fprintf(stderr, "usage: %s PORT OUTSTANDING SECONDS REQUESTS-FILE ANSWERS-FILE [cycle]\n", argv[0]);
    return 1;
  }
  int port = atoi(argv[1]);
  int outstanding = atoi(argv[2]);
  double seconds = atof(argv[3]);
  int cycle = argc == 7 && strcmp(argv[6], "cycle") == 0;
  if (outstanding < 1 || outstanding > MAX_OUTSTANDING) return 1;

  FILE *in = fopen(argv[4], "rb");
  if (!in) die("requests");
  fseek(in, 0, SEEK_END);
  long size = ftell(in);
  rewind(in);
  unsigned char *all = malloc(size);
  if (!all || fread(all, 1, size, in) != (size_t)size) die("read");
  fclose(in);
  size_t count = 0;
  for (long at = 0; at + 2 <= size; count++) at += 2 + ((all[at] << 8) | all[at + 1]);
  unsigned char **request = malloc(count * sizeof *request);
  uint16_t *length = malloc(count * sizeof *length);
  for (long at = 0, i = 0; at + 2 <= size; i++) {
    length[i] = (all[at] << 8) | all[at + 1];
    request[i] = all + at + 2;
    at += 2 + length[i];
  }

  FILE *out = fopen(argv[5], "wb");
  if (!out) die("answers");
  static char outbuf[1 << 20];
  setvbuf(out, outbuf, _IOFBF, sizeof outbuf);

  struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons(port)};
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct pollfd fds[MAX_OUTSTANDING];
  uint32_t pending[MAX_OUTSTANDING];
  double sent_at[MAX_OUTSTANDING];
  size_t next = 0;
  int ran_out = 0;

  double start = now_ms();
  double deadline = start + seconds * 1e3;
  int active = 0;
  for (int s = 0; s < outstanding; s++) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&server, sizeof server) < 0) die("connect");
    fds[s].fd = fd;
    fds[s].events = POLLIN;
    if (cycle && next >= count) next = 0;
    if (next >= count) { ran_out = 1; fds[s].fd = -fd - 1; continue; }
    pending[s] = next++;
    sent_at[s] = now_ms();
    if (send(fd, request[pending[s]], length[pending[s]], 0) < 0) die("send");
    active++;
  }

  unsigned char answer[4096];
  while (active > 0) {
    int ready = poll(fds, outstanding, 100);
    if (ready < 0 && errno != EINTR) die("poll");
    double t = now_ms();
    for (int s = 0; s < outstanding; s++) {
      if (fds[s].fd < 0) continue;
      int done = 0;
      uint16_t got = 0;
      if (fds[s].revents & (POLLIN | POLLERR)) { // POLLERR: an ICMP refusal, read (and cleared) by recv
        ssize_t n = recv(fds[s].fd, answer, sizeof answer, 0);
        if (n < 0) {
          if (errno == EAGAIN || errno == ECONNREFUSED) continue;
          die("recv");
        }
        // An answer to an earlier request (after its timeout) is not this one's.
        if (n < 2 || answer[1] != request[pending[s]][1]) continue;
        got = (uint16_t)n;
        done = 1;
      } else if (t - sent_at[s] > TIMEOUT_MS) {
        done = 1; // lost: written with length 0
      }
      if (!done) continue;
      double latency = t - sent_at[s];
      fwrite(&pending[s], 4, 1, out);
      fwrite(&latency, 8, 1, out);
      fwrite(&got, 2, 1, out);
      if (got) fwrite(answer, 1, got, out);
      if (t >= deadline || (next >= count && !cycle)) {
        if (next >= count && t < deadline) ran_out = 1;
        close(fds[s].fd);
        fds[s].fd = -fds[s].fd - 1;
        active--;
        continue;
      }
      if (cycle && next >= count) next = 0;
      pending[s] = next++;
      sent_at[s] = now_ms();
      if (send(fds[s].fd, request[pending[s]], length[pending[s]], 0) < 0 && errno != ECONNREFUSED) die("send");
    }
  }
  fclose(out);
  struct rusage used;
  getrusage(RUSAGE_SELF, &used);
  double cpu = used.ru_utime.tv_sec + used.ru_utime.tv_usec / 1e6 + used.ru_stime.tv_sec + used.ru_stime.tv_usec / 1e6;
  fprintf(stdout, "%.3f %.3f\n", (now_ms() - start) / 1e3, cpu);
  return ran_out ? 2 : 0;
}
