#!/usr/bin/env bash
# Stages what a many-core machine without a Swift toolchain needs to run the benchmarks, in
# .build-devz/ (ignored by git; about 56 MB, under the device tool's 64 MiB):
#   - depot-compare (read scaling, group commit), built by ../shared/tools/device-bench/build.sh,
#     xz-compressed, with liblmdb.so.0;
#   - depot-postgres-bench (trait Postgres), built the same way (static Swift runtime), xz;
#   - PostgreSQL 15 from this machine's Debian packages (postgres, initdb, pg_ctl, psql, pgbench,
#     pg_basebackup, the server's modules and share/, the shared libraries they load beyond
#     glibc and libstdc++, the UTC zone files), as one tar.xz;
#   - run.sh (beside this script), which unpacks them there and runs both benchmarks.
# Usage, from the repository root: Benchmarks/scripts/device/stage.sh [reads|postgres|all]
# Then on the device: `bash .build-devz/run.sh` (SKIP_READS=1 for PostgreSQL only), carrying
# .build-devz/.
set -euo pipefail
what=${1:-all}
out=.build-devz
mkdir -p "$out"
cp Benchmarks/scripts/device/run.sh "$out/run.sh"
if [ "$what" = reads ] || [ "$what" = all ]; then
    ../shared/tools/device-bench/build.sh Benchmarks depot-compare .build-device
    xz -T2 -6 -c .build-device/depot-compare > "$out/depot-compare.xz"
    cp .build-device/liblmdb.so.0 "$out/"
fi
if [ "$what" = postgres ] || [ "$what" = all ]; then
    stub=$(mktemp -d); trap 'rm -rf "$stub"' EXIT
    echo 'void device_bench_stub(void) {}' >"$stub/s.c"
    cc -c "$stub/s.c" -o "$stub/s.o" && ar rcs "$stub/libcurl.a" "$stub/s.o"
    flags=(-c release --scratch-path .build-traits/postgres-static --traits Postgres --product depot-postgres-bench
           --static-swift-stdlib -Xlinker --unresolved-symbols=ignore-all -Xlinker "-L$stub")
    swift build "${flags[@]}"
    strip -o "$stub/depot-postgres-bench" "$(swift build "${flags[@]}" --show-bin-path)/depot-postgres-bench"
    xz -T2 -6 -c "$stub/depot-postgres-bench" > "$out/depot-postgres-bench.xz"
    cp "$(pkg-config --variable=libdir lmdb 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)/liblmdb.so.0" "$out/"
    bundle="$stub/pg"; P=/usr/lib/postgresql/15
    mkdir -p "$bundle/root$P/bin" "$bundle/root$P/lib" "$bundle/root/usr/share/postgresql" "$bundle/libs" "$bundle/zone/usr/share/zoneinfo/Etc"
    for b in postgres initdb pg_ctl psql pgbench pg_basebackup; do cp -a "$P/bin/$b" "$bundle/root$P/bin/"; done
    for f in "$P"/lib/*.so; do case "$(basename "$f")" in llvmjit*) ;; *) cp -a "$f" "$bundle/root$P/lib/" ;; esac; done
    cp -a /usr/share/postgresql/15 "$bundle/root/usr/share/postgresql/"
    (for f in "$bundle/root$P"/bin/* "$bundle/root$P"/lib/*.so; do ldd "$f"; done) | awk '/=>/ {print $3}' | sort -u \
        | grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so' \
        | while read -r lib; do cp -L "$lib" "$bundle/libs/"; done
    for z in UTC GMT Etc/UTC; do cp -L "/usr/share/zoneinfo/$z" "$bundle/zone/usr/share/zoneinfo/$z"; done
    tar -C "$bundle" -cf - root libs zone | xz -T2 -6 > "$out/pg15.tar.xz"
fi
ls -l "$out"; du -sh "$out"
