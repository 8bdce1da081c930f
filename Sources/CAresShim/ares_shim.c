#include "ares_shim.h"

#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int uplinkd_ares_channel_new(ares_channel *channel, int per_try_timeout_ms, int tries,
                             ares_sock_state_cb sock_state_cb, void *sock_state_data) {
    struct ares_options options = {0};
    static char dns_only[] = "b";
    options.timeout = per_try_timeout_ms;
    options.tries = tries;
    options.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
    options.lookups = dns_only;
    options.ndomains = 0;
    options.domains = NULL;
    options.sock_state_cb = sock_state_cb;
    options.sock_state_cb_data = sock_state_data;
    int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS | ARES_OPT_LOOKUPS | ARES_OPT_DOMAINS
             | ARES_OPT_SOCK_STATE_CB;
    return ares_init_options(channel, &options, mask);
}

/* Header bytes a socket's datagrams or segments carry besides the payload. */
static unsigned int header_bytes(struct uplinkd_ares_traffic *traffic, ares_socket_t fd) {
    for (int i = 0; i < traffic->count; i++) {
        if (traffic->sockets[i] == fd) {
            return (traffic->ipv6[i] ? 40 : 20) + (traffic->stream[i] ? 32 : 8);
        }
    }
    return 28;
}

static ares_socket_t counting_socket(int domain, int type, int protocol, void *user) {
    struct uplinkd_ares_traffic *traffic = user;
    int fd = socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
    if (fd < 0) return ARES_SOCKET_BAD;
    if (traffic->count < 16) {
        traffic->sockets[traffic->count] = fd;
        traffic->ipv6[traffic->count] = domain == AF_INET6;
        traffic->stream[traffic->count] = type == SOCK_STREAM;
        traffic->count++;
    }
    if (type == SOCK_STREAM) {
        /* Handshake and teardown: about three segments each way, SYNs with options. */
        traffic->ip_bytes += 6 * ((domain == AF_INET6 ? 40 : 20) + 32) + 16;
    }
    return fd;
}

static int counting_close(ares_socket_t fd, void *user) {
    struct uplinkd_ares_traffic *traffic = user;
    for (int i = 0; i < traffic->count; i++) {
        if (traffic->sockets[i] == fd) traffic->sockets[i] = -1;
    }
    return close(fd);
}

static int counting_connect(ares_socket_t fd, const struct sockaddr *address, ares_socklen_t length, void *user) {
    (void)user;
    return connect(fd, address, length);
}

static ares_ssize_t counting_recvfrom(ares_socket_t fd, void *buffer, size_t length, int flags,
                                      struct sockaddr *from, ares_socklen_t *from_length, void *user) {
    struct uplinkd_ares_traffic *traffic = user;
    ssize_t received = recvfrom(fd, buffer, length, flags, from, from_length);
    if (received > 0) traffic->ip_bytes += (unsigned long long)received + header_bytes(traffic, fd);
    return received;
}

static ares_ssize_t counting_sendv(ares_socket_t fd, const struct iovec *vector, int count, void *user) {
    struct uplinkd_ares_traffic *traffic = user;
    ssize_t sent = writev(fd, vector, count);
    if (sent > 0) traffic->ip_bytes += (unsigned long long)sent + header_bytes(traffic, fd);
    return sent;
}

static const struct ares_socket_functions counting_functions = {
    counting_socket, counting_close, counting_connect, counting_recvfrom, counting_sendv,
};

void uplinkd_ares_count_traffic(ares_channel channel, struct uplinkd_ares_traffic *traffic) {
    ares_set_socket_functions(channel, &counting_functions, traffic);
}
