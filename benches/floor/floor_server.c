/* The C floor: the least an HTTP/1.1 MCP endpoint can do per request.
 *
 * One process, one poll(2) loop, keep-alive connections. Each POST's body is scanned
 * for its top-level "method" and "id" and answered with a fixed small JSON-RPC reply in
 * either MCP era: `initialize` (2025-11-25, with an Mcp-Session-Id), `server/discover`
 * (2026-07-28), `ping`, `tools/list`, `tools/call` (a one-line text result),
 * notifications (202). No JSON is built or parsed beyond that scan, and no header other
 * than Content-Length is read: this is the floor tai's server is measured against
 * (benches/serve_throughput.rs, benches/mcp_roundtrip.rs build it with `cc -O2`).
 *
 * Usage: floor_server   (binds 127.0.0.1 on a free port, prints "listening on PORT")
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 64
#define IN_CAP (1 << 20)

struct conn {
    int fd;
    size_t len;
    char *in;
};

static struct conn conns[MAX_CONNS];

/* The span of a top-level member's value in a JSON object, or 0 when absent. */
static int member(const char *s, size_t n, const char *key, const char **v, size_t *vlen) {
    size_t klen = strlen(key);
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            size_t start = i + 1, j = start;
            while (j < n && s[j] != '"') j += (s[j] == '\\') ? 2 : 1;
            if (j >= n) return 0;
            size_t k = j + 1;
            while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r')) k++;
            if (depth == 1 && k < n && s[k] == ':' && j - start == klen &&
                memcmp(s + start, key, klen) == 0) {
                k++;
                while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r')) k++;
                size_t e = k;
                if (e < n && s[e] == '"') {
                    e++;
                    while (e < n && s[e] != '"') e += (s[e] == '\\') ? 2 : 1;
                    e++;
                } else {
                    int d = 0;
                    while (e < n) {
                        char x = s[e];
                        if ((x == ',' || x == '}' || x == ']') && d == 0) break;
                        if (x == '{' || x == '[') d++;
                        if (x == '}' || x == ']') d--;
                        e++;
                    }
                }
                if (e > n) return 0;
                *v = s + k;
                *vlen = e - k;
                return 1;
            }
            i = j;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return 0;
}

static int send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int reply(int fd, const char *status, const char *extra, const char *body) {
    char out[4096];
    size_t blen = strlen(body);
    int n = snprintf(out, sizeof out,
                     "HTTP/1.1 %s\r\ncontent-type: application/json\r\n%scontent-length: %zu\r\n\r\n%s",
                     status, extra, blen, body);
    if (n < 0 || (size_t)n >= sizeof out) return -1;
    return send_all(fd, out, (size_t)n);
}

/* Answer one request body; -1 closes the connection. */
static int answer(int fd, const char *body, size_t n) {
    const char *m, *id;
    size_t mlen, idlen;
    if (!member(body, n, "method", &m, &mlen)) return reply(fd, "202 Accepted", "", "");
    if (!member(body, n, "id", &id, &idlen) || idlen > 200)
        return reply(fd, "202 Accepted", "", ""); /* a notification */
    char result[2048];
#define IS(name) (mlen == strlen(name) + 2 && memcmp(m + 1, name, strlen(name)) == 0)
    const char *extra = "";
    if (IS("tools/call")) {
        snprintf(result, sizeof result,
                 "{\"content\":[{\"type\":\"text\",\"text\":\"(empty)\"}],\"isError\":false}");
    } else if (IS("initialize")) {
        extra = "mcp-session-id: floor-session-1\r\n";
        snprintf(result, sizeof result,
                 "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
                 "\"serverInfo\":{\"name\":\"floor\",\"version\":\"0\"}}");
    } else if (IS("server/discover")) {
        snprintf(result, sizeof result,
                 "{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}},"
                 "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"floor\",\"version\":\"0\"}}}");
    } else if (IS("tools/list")) {
        snprintf(result, sizeof result,
                 "{\"tools\":[{\"name\":\"echo\",\"description\":\"Echo\","
                 "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}}]}");
    } else if (IS("ping")) {
        snprintf(result, sizeof result, "{}");
    } else {
        char out[512];
        snprintf(out, sizeof out,
                 "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}",
                 (int)idlen, id);
        return reply(fd, "404 Not Found", "", out);
    }
#undef IS
    char out[3072];
    snprintf(out, sizeof out, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":%s}", (int)idlen, id, result);
    return reply(fd, "200 OK", extra, out);
}

/* Answer every whole request in the connection's buffer; -1 closes it. */
static int drain(struct conn *c) {
    for (;;) {
        char *end = memmem(c->in, c->len, "\r\n\r\n", 4);
        if (!end) return c->len < IN_CAP ? 0 : -1;
        size_t head = (size_t)(end - c->in) + 4;
        size_t body_len = 0;
        for (char *p = c->in; p < end; p++) {
            if ((p == c->in || p[-1] == '\n') && strncasecmp(p, "content-length:", 15) == 0) {
                body_len = strtoul(p + 15, NULL, 10);
                break;
            }
        }
        if (head + body_len > IN_CAP) return -1;
        if (c->len < head + body_len) return 0;
        if (answer(c->fd, c->in + head, body_len) < 0) return -1;
        c->len -= head + body_len;
        memmove(c->in, c->in + head + body_len, c->len);
    }
}

int main(void) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 64) < 0) {
        perror("floor_server: bind/listen");
        return 1;
    }
    socklen_t alen = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &alen);
    printf("listening on %d\n", ntohs(a.sin_port));
    fflush(stdout);
    for (int i = 0; i < MAX_CONNS; i++) conns[i].fd = -1;
    struct pollfd pf[MAX_CONNS + 1];
    for (;;) {
        int n = 0;
        pf[n].fd = lfd;
        pf[n++].events = POLLIN;
        for (int i = 0; i < MAX_CONNS; i++) {
            pf[n].fd = conns[i].fd; /* negative fds are ignored by poll */
            pf[n++].events = POLLIN;
        }
        if (poll(pf, (nfds_t)n, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (pf[0].revents & POLLIN) {
            int fd = accept(lfd, NULL, NULL);
            int slot = -1;
            for (int i = 0; i < MAX_CONNS && fd >= 0; i++)
                if (conns[i].fd < 0) { slot = i; break; }
            if (slot < 0) {
                if (fd >= 0) close(fd);
            } else {
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                conns[slot].fd = fd;
                conns[slot].len = 0;
                if (!conns[slot].in) conns[slot].in = malloc(IN_CAP);
            }
        }
        for (int i = 0; i < MAX_CONNS; i++) {
            struct conn *c = &conns[i];
            if (c->fd < 0 || !(pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = read(c->fd, c->in + c->len, IN_CAP - c->len);
            if (r <= 0 || (c->len += (size_t)r, drain(c) < 0)) {
                close(c->fd);
                c->fd = -1;
            }
        }
    }
}
