// Whether the client of a request has gone away, for a handler that is busy
// generating and not reading from the connection.
//
// cpp-httplib 0.11 (Debian 12's) hands handlers no socket and no "closed"
// query, and a write to a socket the peer has just closed still succeeds
// once. So the handler finds its own connection's descriptor by the
// addresses the request carries (local port + remote address and port, one
// TCP connection), and asks the kernel about it: POLLRDHUP / POLLHUP say the
// peer closed or reset it. The descriptor stays open for as long as the
// handler runs (httplib closes it only after the response), so it cannot be
// reused underneath.
#pragma once
#include <string>

namespace edgellm::server {

// The descriptor of this process's TCP connection with these endpoints, or -1.
int find_connection_fd(int local_port, const std::string& remote_addr, int remote_port);

// True when the peer closed or reset the connection (never blocks).
bool peer_closed(int fd);

}  // namespace edgellm::server
