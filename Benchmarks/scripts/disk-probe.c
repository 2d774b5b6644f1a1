// What this disk charges for a durable write, by shape: one 4 KiB page overwritten, 16 scattered
// pages, 16 contiguous pages, each followed by fdatasync; one page appended (the file grows);
// one page into fallocate'd space. Group commit's bound on a disk: a batch over many leaf pages
// pays for its scattered page writes however cheap the hand-off is.
//
//   cc -O2 Benchmarks/scripts/disk-probe.c -o /tmp/disk-probe && /tmp/disk-probe [DIR]
//
// DIR (default: the current folder) must be on the disk to measure; probe files are removed.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int open_probe(const char *dir, const char *name, char *path, size_t size) {
    snprintf(path, size, "%s/%s", dir, name);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0) { perror(path); exit(1); }
    return fd;
}

static void write_page(int fd, const char *page, long index) {
    if (pwrite(fd, page, 4096, (off_t)index * 4096) != 4096) { perror("pwrite"); exit(1); }
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    const int rounds = 500;
    const long pages = rounds * 16L;
    char page[4096], path[4096];
    memset(page, 1, sizeof page);
    srand(42);

    int fd = open_probe(dir, "disk-probe-a.dat", path, sizeof path);
    for (long i = 0; i < pages; i++) write_page(fd, page, i);
    fsync(fd);
    double t = now_us();
    for (int i = 0; i < rounds; i++) { write_page(fd, page, rand() % pages); fdatasync(fd); }
    printf("overwrite 1 page + fdatasync:             %7.1f us\n", (now_us() - t) / rounds);
    t = now_us();
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 16; k++) write_page(fd, page, rand() % pages);
        fdatasync(fd);
    }
    printf("overwrite 16 scattered pages + fdatasync: %7.1f us\n", (now_us() - t) / rounds);
    t = now_us();
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 16; k++) write_page(fd, page, (i * 16L + k) % pages);
        fdatasync(fd);
    }
    printf("overwrite 16 contiguous pages + fdatasync:%7.1f us\n", (now_us() - t) / rounds);
    close(fd);
    unlink(path);

    fd = open_probe(dir, "disk-probe-b.dat", path, sizeof path);
    t = now_us();
    for (int i = 0; i < rounds; i++) { write_page(fd, page, i); fdatasync(fd); }
    printf("append 1 page + fdatasync:                %7.1f us\n", (now_us() - t) / rounds);
    close(fd);
    unlink(path);

    fd = open_probe(dir, "disk-probe-c.dat", path, sizeof path);
    if (fallocate(fd, 0, 0, (off_t)pages * 4096) != 0) perror("fallocate");
    fsync(fd);
    t = now_us();
    for (int i = 0; i < rounds; i++) { write_page(fd, page, i); fdatasync(fd); }
    printf("1 page into fallocated space + fdatasync: %7.1f us\n", (now_us() - t) / rounds);
    close(fd);
    unlink(path);
    return 0;
}
