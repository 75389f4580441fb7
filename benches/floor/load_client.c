/* The C load client: sequential MCP `tools/call` over one keep-alive HTTP/1.1 connection.
 *
 * It opens the session the era wants (2025-11-25: `initialize`, its Mcp-Session-Id, then
 * `notifications/initialized`; 2026-07-28: nothing, every request carries `_meta` and the
 * MCP-Protocol-Version / Mcp-Method / Mcp-Name headers), makes WARMUP calls, then ROUNDS
 * rounds of CALLS calls, checking every answer (status 200, a result, not isError). Per
 * round it prints one line: requests per second, the median round trip in microseconds,
 * and the server's CPU time per request in microseconds (from /proc/SERVER_PID/schedstat,
 * read between rounds; 0 without a pid). The responses must carry Content-Length.
 *
 * Usage: load_client PORT legacy|modern KEY TOOL ARGS_JSON CALLS ROUNDS [SERVER_PID]
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 200
#define IN_CAP (1 << 20)

static int fd;
static char in[IN_CAP];
static size_t in_len;
static int port;
static const char *key;
static char session[256];

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void die(const char *what) {
    fprintf(stderr, "load_client: %s\n", what);
    exit(1);
}

static unsigned long long server_cpu_ns(int pid) {
    if (pid <= 0) return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long ns = 0;
    if (fscanf(f, "%llu", &ns) != 1) ns = 0;
    fclose(f);
    return ns;
}

/* POST one body with the era's headers; fill `body` with the answer's body. */
static int post(const char *json, const char *extra_headers, char **body, size_t *body_len) {
    char req[8192];
    size_t jlen = strlen(json);
    int n = snprintf(req, sizeof req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                     "%s%s%s%sContent-Length: %zu\r\n\r\n%s",
                     port, key, extra_headers, session[0] ? "Mcp-Session-Id: " : "", session,
                     session[0] ? "\r\n" : "", jlen, json);
    if (n < 0 || (size_t)n >= sizeof req) die("request too long");
    for (size_t at = 0; at < (size_t)n;) {
        ssize_t w = write(fd, req + at, (size_t)n - at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write failed");
        at += (size_t)w;
    }
    for (;;) {
        char *end = in_len ? memmem(in, in_len, "\r\n\r\n", 4) : NULL;
        if (end) {
            size_t head = (size_t)(end - in) + 4;
            size_t clen = (size_t)-1;
            for (char *p = in; p < end; p++) {
                if (p == in || p[-1] == '\n') {
                    if (strncasecmp(p, "content-length:", 15) == 0) clen = strtoul(p + 15, NULL, 10);
                    if (strncasecmp(p, "mcp-session-id:", 15) == 0) {
                        char *v = p + 15;
                        while (*v == ' ') v++;
                        size_t l = strcspn(v, "\r");
                        if (l >= sizeof session) die("session id too long");
                        memcpy(session, v, l);
                        session[l] = 0;
                    }
                }
            }
            if (clen == (size_t)-1) die("a response without Content-Length");
            if (in_len >= head + clen) {
                int status = atoi(in + 9);
                static char copy[IN_CAP];
                memcpy(copy, in + head, clen);
                copy[clen] = 0;
                *body = copy;
                *body_len = clen;
                in_len -= head + clen;
                memmove(in, in + head + clen, in_len);
                return status;
            }
        }
        if (in_len == IN_CAP) die("response too large");
        ssize_t r = read(fd, in + in_len, IN_CAP - in_len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("the server closed the connection");
        in_len += (size_t)r;
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 8) die("usage: load_client PORT legacy|modern KEY TOOL ARGS_JSON CALLS ROUNDS [SERVER_PID]");
    port = atoi(argv[1]);
    int modern = strcmp(argv[2], "modern") == 0;
    key = argv[3];
    const char *tool = argv[4], *args = argv[5];
    int calls = atoi(argv[6]), rounds = atoi(argv[7]);
    int pid = argc > 8 ? atoi(argv[8]) : 0;

    fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("cannot connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    char *body;
    size_t blen;
    char headers[1024];
    if (modern) {
        snprintf(headers, sizeof headers,
                 "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\n", tool);
    } else {
        const char *init =
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
            "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"floor\",\"version\":\"0\"}}}";
        if (post(init, "", &body, &blen) != 200 || !session[0]) die("initialize failed");
        snprintf(headers, sizeof headers, "MCP-Protocol-Version: 2025-11-25\r\n");
        int s = post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", headers, &body, &blen);
        if (s != 202 && s != 200) die("notifications/initialized failed");
    }
    const char *meta =
        ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
        "\"io.modelcontextprotocol/clientCapabilities\":{},"
        "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"floor\",\"version\":\"0\"}}";
    double *took = malloc(sizeof(double) * (size_t)calls);
    long id = 1;
    for (int r = -1; r < rounds; r++) {
        int count = r < 0 ? WARMUP : calls;
        unsigned long long cpu0 = server_cpu_ns(pid);
        double start = now_us();
        for (int i = 0; i < count; i++) {
            char json[4096];
            snprintf(json, sizeof json,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                     "\"arguments\":%s%s}}",
                     id++, tool, args, modern ? meta : "");
            double t0 = now_us();
            int s = post(json, headers, &body, &blen);
            if (r >= 0) took[i] = now_us() - t0;
            if (s != 200 || !strstr(body, "\"result\"") || strstr(body, "\"isError\":true")) {
                fprintf(stderr, "load_client: status %d: %.300s\n", s, body);
                return 1;
            }
        }
        double elapsed = now_us() - start;
        unsigned long long cpu1 = server_cpu_ns(pid);
        if (r < 0) continue;
        qsort(took, (size_t)calls, sizeof(double), cmp);
        printf("%.1f %.2f %.3f\n", calls / (elapsed / 1e6), took[calls / 2],
               (double)(cpu1 - cpu0) / 1e3 / calls);
        fflush(stdout);
    }
    return 0;
}
