/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_keygen.c - rdps-keygen: writes a new domain key file, private to its owner, never over one.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdps/rdps.h>

#include "tool_cli.h"

#define PROG "rdps-keygen"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: " PROG " [-i ID] FILE\n"
            "Writes a new rdps domain key into FILE: %d random bytes from the kernel, as the line\n"
            "ID:HEX that rdps_domain_key_read(3), --key-file and RDPS_DOMAIN_KEY_FILE read, with\n"
            "mode 0600 (rdps refuses a key file its group or others may read). FILE must not\n"
            "exist: a key is never overwritten. Every host of the domain needs the same file.\n"
            "\n"
            "  -i, --id ID     the key's id, 1..%u (default 1); the next key of a rollover\n"
            "                  (rdps_ctx_key_add) takes another id\n"
            "  -h, --help      this text\n"
            "      --version   the tool's and librdps's version and git revision\n"
            "\n"
            "Exit status: 0 written; 1 FILE exists; 2 bad arguments; 4 FILE could not be\n"
            "written (nothing is left behind).\n",
            RDPS_DOMAIN_KEY_BYTES, RDPS_DOMAIN_KEY_ID_MAX);
}

/* The whole buffer from the kernel's generator (getrandom blocks only until it is seeded). */
static bool random_bytes(uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            tool_error(PROG, "getrandom: %s", strerror(errno));
            return false;
        }
        got += (size_t)n;
    }
    return true;
}

static bool write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        text += n;
        len -= (size_t)n;
    }
    return true;
}

/*
 * Creates `path` (O_EXCL: never over an existing file, nor through a symlink), mode 0600 whatever
 * the umask, with the key line, synced. On failure nothing is left behind. Returns a tool_exit.
 */
static int write_key_file(const char *path, const uint8_t key[RDPS_DOMAIN_KEY_BYTES],
                          uint32_t key_id)
{
    char text[160];
    int len = snprintf(text, sizeof(text),
                       "# rdps domain key %u (rdps-keygen): every host of the domain needs it; "
                       "keep it private\n%u:",
                       key_id, key_id);
    for (int i = 0; i < RDPS_DOMAIN_KEY_BYTES; i++)
        len += snprintf(text + len, sizeof(text) - (size_t)len, "%02x", key[i]);
    text[len++] = '\n';

    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        if (e == EEXIST) {
            tool_error(PROG,
                       "%s exists: a key is never overwritten (remove it first, or name "
                       "another file)",
                       path);
            return TOOL_EXIT_FAILED;
        }
        tool_error(PROG, "cannot create %s: %s", path, strerror(e));
        return TOOL_EXIT_RUNTIME;
    }
    bool ok = fchmod(fd, 0600) == 0 && write_all(fd, text, (size_t)len) && fsync(fd) == 0;
    int e = errno;
    explicit_bzero(text, sizeof(text));
    if (close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        unlink(path);
        tool_error(PROG, "cannot write %s: %s", path, strerror(e));
        return TOOL_EXIT_RUNTIME;
    }
    return TOOL_EXIT_OK;
}

int main(int argc, char **argv)
{
    tool_cli_init(argv);
    static const struct option longopts[] = {
        {"id", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        TOOL_VERSION_LONG_OPTION,
        {NULL, 0, NULL, 0},
    };
    uint64_t key_id = 1;
    int c;
    while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (!tool_opt_u64(PROG, "-i", optarg, 1, RDPS_DOMAIN_KEY_ID_MAX, &key_id)) {
                tool_usage_hint(PROG);
                return TOOL_EXIT_USAGE;
            }
            break;
        case 'h':
            usage(stdout);
            return TOOL_EXIT_OK;
        case TOOL_OPT_VERSION:
            tool_version_exit(PROG);
        default: /* getopt printed the one-line error */
            tool_usage_hint(PROG);
            return TOOL_EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || argv[optind][0] == '\0') {
        tool_error(PROG,
                   optind >= argc ? "give the FILE to write the key into"
                                  : "one FILE only (got %d arguments)",
                   argc - optind);
        tool_usage_hint(PROG);
        return TOOL_EXIT_USAGE;
    }
    const char *path = argv[optind];

    uint8_t key[RDPS_DOMAIN_KEY_BYTES], check[RDPS_DOMAIN_KEY_BYTES];
    uint32_t check_id = 0;
    if (!random_bytes(key, sizeof(key)))
        return TOOL_EXIT_RUNTIME;
    int rc = write_key_file(path, key, (uint32_t)key_id);
    if (rc != TOOL_EXIT_OK) {
        explicit_bzero(key, sizeof(key));
        return rc;
    }
    /* What rdps will read is what was made: the library's own reader, mode check included. */
    int err = rdps_domain_key_read(path, check, &check_id);
    bool same = err == 0 && check_id == key_id && memcmp(check, key, sizeof(key)) == 0;
    explicit_bzero(key, sizeof(key));
    explicit_bzero(check, sizeof(check));
    if (!same) {
        unlink(path);
        tool_error(PROG, "%s does not read back: %s", path,
                   err < 0 ? rdps_last_error_message() : "another key or id");
        return TOOL_EXIT_RUNTIME;
    }
    printf("%s: domain key %u, mode 0600\n", path, (unsigned)key_id);
    return TOOL_EXIT_OK;
}
