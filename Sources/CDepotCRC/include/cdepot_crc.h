#ifndef CDEPOT_CRC_H
#define CDEPOT_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 if this CPU has a CRC-32C instruction this library can use (x86-64: SSE 4.2 `crc32`, found
/// with cpuid; arm64: the ARMv8 CRC extension, from getauxval on Linux, always on Apple
/// silicon), else 0. Ask once and cache the answer: it is not cheap.
int cdepot_crc32c_hardware_available(void);

/// CRC-32C (Castagnoli) of `count` bytes at `bytes`, continuing from `crc` (0 to start), with the
/// CPU's instruction. Same results as Depot's software table. Call only when
/// cdepot_crc32c_hardware_available() returned 1 (it returns `crc` unchanged on other CPUs).
uint32_t cdepot_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

/// CRC-32C of a record's checksummed bytes, with the CPU's instruction: bytes 0..<10 and
/// 14..<count of the `count` (at least 14) bytes at `bytes` (the 4 bytes between hold the stored
/// checksum). One call for the check of every read. Same conditions as cdepot_crc32c_hardware.
uint32_t cdepot_crc32c_record_hardware(const void *bytes, size_t count);

#ifdef __cplusplus
}
#endif
#endif
