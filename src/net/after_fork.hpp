// What a child process inherits from fork() and must never use: the sockets of its parent's
// connections. Two processes that share one connection read each other's replies and write
// into each other's requests (and, over TLS, each other's record sequence).
//
// A connection tracks its socket while it is connected. In the child, a pthread_atfork
// handler replaces each tracked descriptor with an unconnected socket of its own (dup2), so
// that nothing the child does with an inherited connection -- read, write, close, a TLS
// shutdown -- can reach the parent's peer: the parent's connection stays whole, and only the
// parent's descriptors refer to it. The descriptor number stays taken, so it is never reused
// under an inherited object's feet. The handler also bumps detail::fork_generation().
#pragma once

namespace folsom::net {

/// Records `fd` as a connected connection socket (idempotent for the same fd).
void track_connection_socket(int fd);
/// Forgets `fd`; call before closing it. A no-op for an fd not tracked.
void untrack_connection_socket(int fd) noexcept;

}  // namespace folsom::net
