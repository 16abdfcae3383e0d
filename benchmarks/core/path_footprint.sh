#!/usr/bin/env bash
# What the path of a small copy touches, traced by valgrind's lackey (Debian: apt install
# valgrind): instructions, libkupl's code lines and pages, and data pages, for a 256 B
# kupl_memcpy_async + kupl_event_wait on an idle queue and for a 256 B kupl_memcpy, each after
# three untraced ones. A page the runtime has not touched for a while costs a page walk
# (core_cold_state_bench: 0.5-0.9 us on a VM), so these counts are what a cold copy pays for.
# With --pages, each data page is listed too, in the order the path first touches it: what it
# is mapped from, and the libkupl function that touched it first (two pages of one object mean
# it straddles a page boundary).
# Usage: benchmarks/core/path_footprint.sh [--pages] [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
pages=0
if [ "${1:-}" = "--pages" ]; then
  pages=1
  shift
fi
build=$(realpath "${1:-build}")
command -v valgrind >/dev/null || { echo "path_footprint: needs valgrind (apt install valgrind)" >&2; exit 2; }
[ -e "$build/core/libkupl.so" ] || { echo "path_footprint: no $build/core/libkupl.so (build first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/probe.cpp" <<'EOF'
#include "kupl.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
extern "C" __attribute__((noinline)) void marker_begin() { asm volatile("" ::: "memory"); }
extern "C" __attribute__((noinline)) void marker_end() { asm volatile("" ::: "memory"); }
int main(int, char **argv) {
    const bool sync = std::strcmp(argv[1], "sync") == 0;
    static char src[256], dst[256];
    kupl_queue_h queue = kupl_queue_create();
    kupl_event_h event = kupl_event_create();
    auto copy = [&] {
        if (sync)
            return kupl_memcpy(dst, src, sizeof src);
        const int submitted = kupl_memcpy_async(dst, src, sizeof src, queue, event);
        return submitted != KUPL_OK ? submitted : kupl_event_wait(event);
    };
    for (int i = 0; i < 3; ++i)
        if (copy() != KUPL_OK)
            return 1;
    FILE *maps = std::fopen("/proc/self/maps", "r"), *out = std::fopen(argv[2], "w");
    for (int c; (c = std::fgetc(maps)) != EOF;)
        std::fputc(c, out);
    std::fprintf(out, "markers %p %p\n", (void *)marker_begin, (void *)marker_end);
    std::fclose(out);
    std::fclose(maps);
    marker_begin();
    const int rc = copy();
    marker_end();
    return rc == KUPL_OK ? 0 : 1;
}
EOF
c++ -O2 -o "$work/probe" "$work/probe.cpp" -I include -I "$build/include" -L "$build/core" -lkupl \
  -Wl,-rpath,"$build/core"

for path in async sync; do
  KUPL_NUM_CHANNELS=1 valgrind --tool=lackey --trace-mem=yes --log-file="$work/$path.log" \
    "$work/probe" "$path" "$work/$path.maps" >/dev/null 2>&1 || { echo "path_footprint: the probe failed" >&2; exit 1; }
  python3 - "$work/$path.log" "$work/$path.maps" "$path" "$pages" "$build/core/libkupl.so" <<'EOF'
import subprocess, sys
log, maps_file, path, list_pages, libkupl = sys.argv[1:6]
maps, begin, end = [], None, None
for line in open(maps_file):
    if line.startswith('markers '):
        begin, end = (int(x, 16) for x in line.split()[1:3])
        continue
    fields = line.split()
    low, high = (int(x, 16) for x in fields[0].split('-'))
    maps.append((low, high, fields[5] if len(fields) > 5 else ''))
def in_libkupl(address):
    return any(low <= address < high and '/libkupl.so' in name for low, high, name in maps)
tracing, instructions, last_instruction = False, 0, 0
code_lines, data_pages, data_lines = set(), set(), set()
first_touches = []  # (instruction, address) of each data page's first access
for line in open(log):
    if line.startswith('=='):
        continue
    kind, _, rest = line.strip().partition(' ')
    if not rest:
        continue
    address = int(rest.strip().split(',')[0], 16)
    if kind == 'I':
        if address == begin:
            tracing = True
        elif address == end and tracing:
            break
        if tracing:
            instructions += 1
            last_instruction = address
            if in_libkupl(address):
                code_lines.add(address >> 6)
    elif tracing:
        if address >> 12 not in data_pages:
            first_touches.append((last_instruction, address))
        data_pages.add(address >> 12)
        data_lines.add(address >> 6)
if instructions == 0:
    sys.exit('path_footprint: the traced call was not found between the markers in ' + log)
label = '256 B async + wait' if path == 'async' else '256 B kupl_memcpy '
def mapped_from(address):
    names = [name for low, high, name in maps if low <= address < high]
    return (names[0].rsplit('/', 1)[-1] or '[anonymous]') if names else '?'
def libkupl_function(instruction):
    if not in_libkupl(instruction):
        return ''
    base = min(low for low, high, name in maps if '/libkupl.so' in name)
    out = subprocess.run(['addr2line', '-f', '-C', '-e', libkupl, hex(instruction - base)],
                         capture_output=True, text=True).stdout
    return out.split('\n')[0][:100]
if list_pages == '1':
    for instruction, address in first_touches:
        print('  page %#14x  %-24s %s' % (address >> 12 << 12, mapped_from(address),
                                          libkupl_function(instruction)))
print('%s: %4d instructions; libkupl code %3d lines on %d pages; data %3d lines on %2d pages'
      % (label, instructions, len(code_lines), len({l >> 6 for l in code_lines}), len(data_lines),
         len(data_pages)))
EOF
done
