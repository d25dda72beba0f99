/* rdps.h - public API of rdps, publish/subscribe over RDMA Unreliable Datagram QPs. */
#ifndef RDPS_RDPS_H
#define RDPS_RDPS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RDPS_BUILDING_LIBRARY)
#define RDPS_EXPORT __attribute__((visibility("default")))
#else
#define RDPS_EXPORT
#endif

#define RDPS_VERSION_MAJOR 0
#define RDPS_VERSION_MINOR 1
#define RDPS_VERSION_PATCH 0

/*
 * Error codes. Every function that can fail returns 0 (or a non-negative
 * count) on success and one of these negative codes on failure. OS and verbs
 * errors map to -errno; rdps's own conditions live below -4000.
 * X(name, value, message)
 */
#define RDPS_ERROR_MAP(X)                                                                  \
    X(EPERM, -EPERM, "operation not permitted")                                            \
    X(ENOENT, -ENOENT, "no such entry")                                                    \
    X(EINTR, -EINTR, "interrupted")                                                        \
    X(EIO, -EIO, "I/O error")                                                              \
    X(EAGAIN, -EAGAIN, "resource temporarily unavailable (back-pressure), try again")      \
    X(ENOMEM, -ENOMEM, "out of memory")                                                    \
    X(EACCES, -EACCES, "permission denied")                                                \
    X(EBUSY, -EBUSY, "resource busy")                                                      \
    X(EEXIST, -EEXIST, "already exists")                                                   \
    X(ENODEV, -ENODEV, "no such RDMA device or port")                                      \
    X(EINVAL, -EINVAL, "invalid argument")                                                 \
    X(ENOSPC, -ENOSPC, "no space left (queue or pool full)")                               \
    X(ERANGE, -ERANGE, "value out of range")                                               \
    X(ENOSYS, -ENOSYS, "not implemented")                                                  \
    X(ENOTSUP, -ENOTSUP, "operation not supported on this device or link layer")           \
    X(EMSGSIZE, -EMSGSIZE, "message too long")                                             \
    X(EPROTO, -EPROTO, "protocol error")                                                   \
    X(EADDRNOTAVAIL, -EADDRNOTAVAIL, "address not available")                              \
    X(ENETDOWN, -ENETDOWN, "network (port) is down")                                       \
    X(ENETUNREACH, -ENETUNREACH, "network unreachable")                                    \
    X(EHOSTUNREACH, -EHOSTUNREACH, "host unreachable")                                     \
    X(ETIMEDOUT, -ETIMEDOUT, "timed out")                                                  \
    X(ECONNREFUSED, -ECONNREFUSED, "connection refused")                                   \
    X(ECANCELED, -ECANCELED, "operation canceled")                                         \
    X(EOVERFLOW, -EOVERFLOW, "value too large for defined data type")                      \
    X(ESHUTDOWN, -ESHUTDOWN, "context is shutting down")                                   \
    X(EDEVFATAL, -4001, "RDMA device reported a fatal error")                              \
    X(EBADFRAME, -4002, "malformed frame")                                                 \
    X(ENOTJOINED, -4003, "multicast group not joined yet")                                 \
    X(ECLOSED, -4004, "handle already closed")

enum rdps_error {
#define RDPS_ERROR_ENUM_(name, value, message) RDPS_##name = (value),
    RDPS_ERROR_MAP(RDPS_ERROR_ENUM_)
#undef RDPS_ERROR_ENUM_
};

/* Human-readable text for an error code (never NULL; unknown codes get a generic text). */
RDPS_EXPORT const char *rdps_strerror(int err);
/* Symbolic name of an error code, e.g. "RDPS_EAGAIN" (never NULL). */
RDPS_EXPORT const char *rdps_err_name(int err);
/*
 * Details of the last slow-path failure on the calling thread (create, join,
 * resolve, ...), e.g. "rdps_ctx_create: ibv_create_qp: Cannot allocate memory".
 * Empty string when there is none. Hot paths return codes only.
 */
RDPS_EXPORT const char *rdps_last_error_message(void);

/* Library version as "MAJOR.MINOR.PATCH". */
RDPS_EXPORT const char *rdps_version(void);

#ifdef __cplusplus
}
#endif
#endif /* RDPS_RDPS_H */
