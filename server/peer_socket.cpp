#include "server/peer_socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

namespace edgellm::server {

namespace {
// "127.0.0.1" / "::1" and the port of a socket address.
bool address_of(const sockaddr_storage& a, std::string* host, int* port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    if (!inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf)) return false;
    *port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (!inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf)) return false;
    *port = ntohs(in6->sin6_port);
  } else {
    return false;
  }
  *host = buf;
  return true;
}
}  // namespace

int find_connection_fd(int local_port, const std::string& remote_addr, int remote_port) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int found = -1;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(d)) continue;
    sockaddr_storage peer {}, self {};
    socklen_t pl = sizeof peer, sl = sizeof self;
    if (getpeername(int(fd), reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;  // not a connected socket
    if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&self), &sl) != 0) continue;
    std::string ph, sh;
    int pp = 0, sp = 0;
    if (!address_of(peer, &ph, &pp) || !address_of(self, &sh, &sp)) continue;
    if (pp == remote_port && sp == local_port && ph == remote_addr) {
      found = int(fd);
      break;
    }
  }
  closedir(d);
  return found;
}

bool peer_closed(int fd) {
  if (fd < 0) return false;
  pollfd p {fd, POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace edgellm::server
