// The C library and OpenSSL calls troupe takes over from CAF's shared libraries: accept() and
// recv() for the accept gate (actors/transport/accept_gate.hpp), SSL_read/write/connect/accept
// to clear OpenSSL's error queue first (actors/transport/openssl_error_queue.cpp).
//
// In a program (an executable linked with troupe::actors) the process defines accept, recv and
// SSL_* and exports them (actors/CMakeLists.txt), so CAF's libraries call them through their
// PLT, and each forwards to the function here. A shared object that links troupe — the Python
// module — is loaded with its symbols private (RTLD_LOCAL), after libc, so CAF's libraries would
// still call libc's and libssl's: such a host calls install_in_caf_libraries() once, before any
// Runtime starts, and the functions here are written into the GOT entries of libcaf_io and
// libcaf_openssl (ELF, x86-64 and AArch64).
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include "troupe/graph/core/status.hpp"

struct ssl_st;

namespace troupe::caf_call_hooks {

int accept(int fd, sockaddr* addr, socklen_t* addr_len);     // accept_gate.cpp
ssize_t recv(int fd, void* buffer, size_t size, int flags);  // accept_gate.cpp
int ssl_read(ssl_st* ssl, void* buffer, int size);           // openssl_error_queue.cpp
int ssl_write(ssl_st* ssl, const void* buffer, int size);    // openssl_error_queue.cpp
int ssl_connect(ssl_st* ssl);                                // openssl_error_queue.cpp
int ssl_accept(ssl_st* ssl);                                 // openssl_error_queue.cpp

// Points libcaf_io's accept/recv and libcaf_openssl's SSL_* entries at the functions above.
// Idempotent. Internal, naming the library and the call, when a loaded CAF library has no such
// entry or a page cannot be made writable; FailedPrecondition when libcaf_io is not loaded.
Status install_in_caf_libraries();

}  // namespace troupe::caf_call_hooks
