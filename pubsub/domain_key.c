/* SPDX-License-Identifier: BSD-2-Clause */
/* domain_key.c - authenticated domains at the API: key files, the ctx's authenticating
 * interceptor (rdps_auth.h) and key rollover. */
#include "ctx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdps_auth.h"
#include "rdps_error.h"

_Static_assert(RDPS_DOMAIN_KEY_BYTES == RDPS_AUTH_KEY_LEN, "one key size");
_Static_assert(RDPS_DOMAIN_KEY_ID_MAX == RDPS_AUTH_KEY_ID_MAX, "one key id range");
_Static_assert(RDPS_AUTH_OFF_WORD == RDPS_FRAME_OFF_RESERVED, "the auth word is the reserved word");
_Static_assert(RDPS_AUTH_HEADER_LEN == RDPS_FRAME_HEADER_LEN, "one header length");
_Static_assert(RDPS_AUTH_OFF_TYPE == RDPS_FRAME_OFF_TYPE && RDPS_AUTH_FRAME_DATA == RDPS_FRAME_DATA,
               "the interceptor reads the frame type");

/* A key file is small: one key, a few comment lines. */
#define KEY_FILE_MAX 4096

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* "[ID:]HEX64" (surrounding whitespace already skipped, `len` bytes). */
static int parse_key_line(const char *path, const char *p, size_t len,
                          uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t *key_id)
{
    uint64_t id = 1;
    const char *colon = memchr(p, ':', len);
    if (colon != NULL) {
        if (colon == p || colon - p > 8)
            return rdps__set_err(RDPS_EINVAL, "key file %s: the key id before ':' must be 1..%u",
                                 path, RDPS_DOMAIN_KEY_ID_MAX);
        id = 0;
        for (const char *q = p; q < colon; q++) {
            if (*q < '0' || *q > '9')
                return rdps__set_err(RDPS_EINVAL, "key file %s: key id '%.*s' is not decimal", path,
                                     (int)(colon - p), p);
            id = id * 10 + (uint64_t)(*q - '0');
        }
        len -= (size_t)(colon + 1 - p);
        p = colon + 1;
    }
    if (id == 0 || id > RDPS_DOMAIN_KEY_ID_MAX)
        return rdps__set_err(RDPS_EINVAL, "key file %s: key id %llu outside 1..%u", path,
                             (unsigned long long)id, RDPS_DOMAIN_KEY_ID_MAX);
    if (len != 2 * RDPS_DOMAIN_KEY_BYTES)
        return rdps__set_err(RDPS_EINVAL,
                             "key file %s: the key must be %d hexadecimal characters (found %zu)",
                             path, 2 * RDPS_DOMAIN_KEY_BYTES, len);
    for (size_t i = 0; i < RDPS_DOMAIN_KEY_BYTES; i++) {
        int hi = hex_value(p[2 * i]), lo = hex_value(p[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            sodium_memzero(key, RDPS_DOMAIN_KEY_BYTES);
            return rdps__set_err(RDPS_EINVAL, "key file %s: a character of the key is not hex",
                                 path);
        }
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    if (key_id != NULL)
        *key_id = (uint32_t)id;
    return 0;
}

static int parse_key_file(const char *path, const char *text, size_t n,
                          uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t *key_id)
{
    const char *found = NULL;
    size_t found_len = 0;
    for (size_t at = 0; at < n;) {
        size_t end = at;
        while (end < n && text[end] != '\n')
            end++;
        size_t b = at, e = end;
        while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\r'))
            b++;
        while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r'))
            e--;
        if (e > b && text[b] != '#') {
            if (found != NULL)
                return rdps__set_err(RDPS_EINVAL, "key file %s: more than one key line", path);
            found = text + b;
            found_len = e - b;
        }
        at = end + 1;
    }
    if (found == NULL)
        return rdps__set_err(RDPS_EINVAL, "key file %s: no key in it", path);
    return parse_key_line(path, found, found_len, key, key_id);
}

static int domain_key_read(const char *path, uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t *key_id)
{
    char text[KEY_FILE_MAX];
    struct stat st;
    if (path == NULL || key == NULL)
        return rdps__set_err_static(RDPS_EINVAL, path == NULL ? "NULL path" : "NULL key");
    /* O_NONBLOCK: a FIFO (or a device) named here must not block context creation for ever; it
     * is refused below, like anything that is not a regular file. Symbolic links are followed
     * (mounted secrets are links): what is checked is the file the descriptor opened. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return rdps__set_err(rdps__errno_code(errno), "key file %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return rdps__set_err(rdps__errno_code(e), "key file %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return rdps__set_err(RDPS_EINVAL, "key file %s: not a regular file", path);
    }
    if ((st.st_mode & 077) != 0) {
        close(fd);
        return rdps__set_err(RDPS_EACCES,
                             "key file %s: mode %04o lets its group or others at it; a domain "
                             "key must be private (chmod 600 %s)",
                             path, (unsigned)(st.st_mode & 07777), path);
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        close(fd);
        return rdps__set_err(RDPS_EACCES,
                             "key file %s: owned by uid %u, not by us (uid %u) or root: another "
                             "user could choose our key",
                             path, (unsigned)st.st_uid, (unsigned)geteuid());
    }
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, text + n, sizeof(text) - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            sodium_memzero(text, sizeof(text));
            return rdps__set_err(rdps__errno_code(e), "key file %s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == sizeof(text)) {
            close(fd);
            sodium_memzero(text, sizeof(text));
            return rdps__set_err(RDPS_EINVAL, "key file %s: larger than %d bytes", path,
                                 KEY_FILE_MAX - 1);
        }
    }
    close(fd);
    int rc = parse_key_file(path, text, n, key, key_id);
    sodium_memzero(text, sizeof(text));
    return rc;
}

int rdps_domain_key_read(const char *path, uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t *key_id)
{
    rdps__api_enter();
    return rdps__api_return(domain_key_read(path, key, key_id), "rdps_domain_key_read");
}

int rdps__ctx_wrap_auth(const rdps_config *cfg, struct rdps_transport **t)
{
    uint8_t key[RDPS_DOMAIN_KEY_BYTES];
    uint32_t key_id = cfg->domain_key_id != 0 ? cfg->domain_key_id : 1;
    const char *file = cfg->domain_key_file;
    int rc;
    if (cfg->domain_key != NULL) {
        memcpy(key, cfg->domain_key, sizeof(key));
    } else {
        if (file == NULL) {
            file = getenv("RDPS_DOMAIN_KEY_FILE");
            if (file != NULL && file[0] == '\0')
                file = NULL;
        } else if (file[0] == '\0') {
            file = NULL; /* "": keyless whatever the environment says */
        }
        if (file == NULL) {
            if (cfg->encrypt)
                return rdps__set_err(RDPS_EINVAL, "config encrypt needs a domain key");
            return 0;
        }
        if ((rc = domain_key_read(file, key, &key_id)) < 0)
            return rc;
    }
    struct rdps_auth_config ac = {
        .key = key,
        .key_id = key_id,
        .encrypt = cfg->encrypt != 0,
        .max_senders = cfg->replay_senders,
        .max_age_ms = cfg->replay_max_age_ms,
    };
    struct rdps_transport *wrapped;
    rc = rdps__auth_transport_create(*t, &ac, &wrapped);
    sodium_memzero(key, sizeof(key));
    if (rc < 0)
        return rc;
    *t = wrapped;
    return 0;
}

/* The ctx's authenticating interceptor (outermost), or an error for a keyless or NULL ctx. */
static int ctx_auth(const rdps_ctx_t *ctx, struct rdps_transport **out)
{
    if (ctx == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL ctx");
    if (!rdps__auth_transport_is(ctx->transport))
        return rdps__set_err_static(RDPS_ENOTSUP, "the ctx was created without a domain key "
                                                  "(rdps_config.domain_key or domain_key_file)");
    *out = ctx->transport;
    return 0;
}

static int check_key_id(uint32_t key_id)
{
    if (key_id == 0 || key_id > RDPS_DOMAIN_KEY_ID_MAX)
        return rdps__set_err(RDPS_EINVAL, "key id %u outside 1..%u", key_id,
                             RDPS_DOMAIN_KEY_ID_MAX);
    return 0;
}

static int ctx_key_add(rdps_ctx_t *ctx, const uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t key_id)
{
    struct rdps_transport *t = NULL; /* set by ctx_auth on success (GCC 12 -O3 cannot tell) */
    int rc = ctx_auth(ctx, &t);
    if (rc == 0 && key == NULL)
        rc = rdps__set_err_static(RDPS_EINVAL, "NULL key");
    return rc < 0 ? rc : rdps__auth_key_add(t, key, key_id);
}

int rdps_ctx_key_add(rdps_ctx_t *handle, const uint8_t key[RDPS_DOMAIN_KEY_BYTES], uint32_t key_id)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_key_add(ctx, key, key_id), "rdps_ctx_key_add");
}

/* rdps_ctx_key_use and _remove: a keyed ctx, a valid id, then the interceptor's own rule. */
static int ctx_key_by_id(rdps_ctx_t *ctx, uint32_t key_id,
                         int (*op)(struct rdps_transport *t, uint32_t key_id))
{
    struct rdps_transport *t = NULL; /* set by ctx_auth on success (GCC 12 -O3 cannot tell) */
    int rc = ctx_auth(ctx, &t);
    if (rc == 0)
        rc = check_key_id(key_id);
    return rc < 0 ? rc : op(t, key_id);
}

int rdps_ctx_key_use(rdps_ctx_t *handle, uint32_t key_id)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_key_by_id(ctx, key_id, rdps__auth_key_use),
                            "rdps_ctx_key_use");
}

int rdps_ctx_key_remove(rdps_ctx_t *handle, uint32_t key_id)
{
    rdps_ctx_t *ctx;
    rdps__api_enter();
    int rc = rdps__ctx_enter(handle, &ctx);
    return rdps__api_return(rc < 0 ? rc : ctx_key_by_id(ctx, key_id, rdps__auth_key_remove),
                            "rdps_ctx_key_remove");
}

uint32_t rdps_ctx_key_in_use(const rdps_ctx_t *handle)
{
    rdps_ctx_t *ctx;
    if (rdps__ctx_enter(handle, &ctx) < 0) {
        rdps__api_note("rdps_ctx_key_in_use");
        return 0;
    }
    return rdps__auth_key_in_use(ctx->transport);
}
