// Hardware CRC-32C for Depot's record checksums. Swift cannot emit the instructions, so this tiny
// C target does; the functions carry their own `target` attribute, so the rest of the build needs
// no special flags and the instructions run only after the run-time check said they exist.
#include "cdepot_crc.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>

int cdepot_crc32c_hardware_available(void) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t cdepot_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = (uint32_t)~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    // The last 0 to 7 bytes in at most three steps (no byte loop).
    if (count & 4) {
        uint32_t word;
        memcpy(&word, p, 4);
        c32 = _mm_crc32_u32(c32, word);
        p += 4;
    }
    if (count & 2) {
        uint16_t half;
        memcpy(&half, p, 2);
        c32 = _mm_crc32_u16(c32, half);
        p += 2;
    }
    if (count & 1) c32 = _mm_crc32_u8(c32, *p);
    return ~c32;
}

__attribute__((target("sse4.2")))
uint32_t cdepot_crc32c_record_hardware(const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t head;
    uint16_t tail;
    memcpy(&head, p, 8);
    memcpy(&tail, p + 8, 2);
    uint32_t c = _mm_crc32_u16((uint32_t)_mm_crc32_u64(0xFFFFFFFFu, head), tail);
    return cdepot_crc32c_hardware(~c, p + 14, count - 14);
}

#elif defined(__aarch64__)
#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

int cdepot_crc32c_hardware_available(void) {
#if defined(__APPLE__)
    return 1; // every Apple arm64 CPU has the CRC extension
#elif defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
    return 0;
#endif
}

__attribute__((target("crc")))
uint32_t cdepot_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint32_t c = ~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __crc32cd(c, word);
        p += 8;
        count -= 8;
    }
    // The last 0 to 7 bytes in at most three steps (no byte loop).
    if (count & 4) {
        uint32_t word;
        memcpy(&word, p, 4);
        c = __crc32cw(c, word);
        p += 4;
    }
    if (count & 2) {
        uint16_t half;
        memcpy(&half, p, 2);
        c = __crc32ch(c, half);
        p += 2;
    }
    if (count & 1) c = __crc32cb(c, *p);
    return ~c;
}

__attribute__((target("crc")))
uint32_t cdepot_crc32c_record_hardware(const void *bytes, size_t count) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t head;
    uint16_t tail;
    memcpy(&head, p, 8);
    memcpy(&tail, p + 8, 2);
    uint32_t c = __crc32ch(__crc32cd(0xFFFFFFFFu, head), tail);
    return cdepot_crc32c_hardware(~c, p + 14, count - 14);
}

#else
int cdepot_crc32c_hardware_available(void) { return 0; }

uint32_t cdepot_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}

uint32_t cdepot_crc32c_record_hardware(const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return 0;
}
#endif
