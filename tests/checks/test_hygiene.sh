#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_hygiene.sh - the preload library calls nothing on its fault, evict,
# store and interposed paths that could allocate, lock what the program may
# hold, or depend on stdio, the environment or the dynamic loader.
#
# A program thread can take a fault (or call mmap, which we interpose) while
# it holds the malloc arena lock, the stdio lock or the loader lock; if the
# handler, the evictor or the interposed mmap then called malloc, fprintf or
# dlsym, the process would hang. So every object of libzswap.so
# (src/*/.libs/*.o) is read with nm -u and each undefined symbol must be either
# defined by another object of the library or allowed below:
#   - everywhere: raw string/memory helpers, thin system call wrappers
#     (syscall, ioctl, close, poll, nanosleep, sched_setaffinity...), the library's own
#     pthread locks, signal masks, abort (the loud-crash path: its lock is
#     held only by a thread that is itself aborting), compiler and sanitizer
#     support;
#   - comp.o: the LZ4/zstd entry points that work in caller-owned memory
#     (never ZSTD_create*/free*, ZSTD_compress/ZSTD_decompress, LZ4_create*);
#     LZO's lzo1x_1_15_compress and lzo1x_decompress_safe (liblzo2 calls
#     nothing but mem* itself), and lzo_init (__lzo_init_v2) only in
#     comp_ws_init, which the store calls at start-up;
#   - start-up only, and checked to be referenced ONLY from the named
#     functions (objdump -dr: the function holding each relocation):
#       start.o   getauxval, pthread_atfork (or the __register_atfork it
#                 calls, with __dso_handle), pthread_create, pthread_attr_*,
#                 pthread_rwlock_init, pthread_rwlockattr_* (start_init, start_run and
#                 the thread starts they call)
#       engine.o  dl_iterate_phdr (the loader lock: the objects' data, noted
#                 once) (engine_note_objects)
#       bindnow.o dl_iterate_phdr, dladdr1 (the dependencies' PLT slots,
#                 bound once) (bindnow_closure)
#       dynlib.o  dlopen, dlsym, dlerror, dlclose, dlinfo (zstd, lzo2,
#                 sodium and unwind loaded when the library starts)
#                 (dynlib_try); their functions are called through
#                 pointers, so the names the tables ask for (comp.o,
#                 backing.o, unwind.o) are checked as calls would be
#       backing.o open, stat, statfs, statvfs, access, mkostemp, unlink,
#                 fchmod, fcntl, libsodium's set-up, pthread_mutex_init
#                 (backing_open and its helpers; backing_fork_child, in a
#                 fork child before its threads start); anywhere: pread,
#                 pwrite, fallocate, sync_file_range, posix_fadvise, fstat
#                 and libsodium's pure functions (the second tier's I/O)
#       store.o   sysconf, pthread_mutex_init (zswap_store_create;
#                 zswap_store_fork_child, in a fork child before its threads
#                 start), pthread_mutex_destroy (zswap_store_destroy; tools
#                 only)
#       zsmalloc.o pthread_mutex_init, pthread_mutexattr_* (zs_create_pool),
#                 pthread_mutex_destroy (zs_destroy_pool): at start and by
#                 the reclaimer at a change of compressor, never on a fault
#     options.o is start-up code as a whole and has its own test
#     (test_options_calls.sh); here it may only add environ.
#     growth.o (src/reclaim/growth.c) is what libzswap's malloc, calloc and
#     realloc (src/shim/alloc.c) do: it calls glibc's __libc_malloc,
#     __libc_calloc, __libc_realloc, reads __curbrk (glibc's cached break)
#     and _DYNAMIC (the library's own dynamic section, the linker's); the
#     three names alloc.o defines do not count as the library's own when
#     another object calls them.
#     elfsym.o (src/base/elfsym.c) reads _r_debug (the link map: the loaded
#     objects' symbol tables, read without the loader); start.o reads its
#     state word (no start while the loader maps an object).
# Anything else (malloc, calloc, realloc, free, printf/puts/fopen and the
# rest of stdio, getenv, dlsym, dlopen, __tls_get_addr, qsort, atexit,
# strerror, sysconf outside start-up...) fails. Then the linked library
# itself (nm -D --undefined-only) must import none of the worst offenders,
# whatever object they came from.
#
# The library is linked lazily (Makefile.am: a program that never starts it
# resolves only the slots it calls through) and binds every slot left at its
# start, the objects it calls into as well (src/base/bindnow.c): with a slot
# left lazy, a fault handler's first call through it would run the loader's
# resolver, which reads the loader's search list, which may live in the
# program's heap. tests/engine/test_eng_lazybind.sh reads the slots of a
# started library.
#
# The checker proves it can fail before it is trusted: an object compiled
# here with a malloc call, and one with pthread_create outside start-up,
# must both be rejected (skipped only if no C compiler is found).

builddir=${ZSWAP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
lib=${ZSWAP_LIB:-$builddir/.libs/libzswap.so}
name=test_hygiene

say() { printf '%s: %s\n' "$name" "$*" >&2; }

command -v nm >/dev/null 2>&1 || { say "SKIP: nm (binutils) is not installed"; exit 77; }
command -v objdump >/dev/null 2>&1 || { say "SKIP: objdump (binutils) is not installed"; exit 77; }
command -v objcopy >/dev/null 2>&1 || { say "SKIP: objcopy (binutils) is not installed"; exit 77; }

set -- "$builddir"/src/*/.libs/*.o
[ -r "$1" ] || { say "ERROR: no library objects under $builddir/src (make builds them)"; exit 99; }
objs="$*"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# Every symbol the library's own objects define: calls between them are fine.
# Not malloc, calloc and realloc (alloc.o interposes them): a call to
# them is a call to the program's allocator.
nm --defined-only $objs 2>/dev/null | awk 'NF >= 3 { print $3 }' | grep -vxE 'malloc|calloc|realloc' |
	sort -u > "$tmp/own"

# allowed BASE SYMBOL: 0 = allowed anywhere in that object, 1 = start-up
# only (the functions are listed by startup_fns), 2 = never.
allowed() {
	case $2 in
	# compiler, linker and sanitizer support
	_GLOBAL_OFFSET_TABLE_|__stack_chk_fail|__popcountdi2|__asan_*|__ubsan_*|__tsan_*|__sanitizer_*|__msan_*|__gcov_*|__lsan_*)
		return 0 ;;
	# pure memory and string helpers (no locale, no allocation)
	memcpy|memmove|memset|memcmp|memchr|strlen|strnlen|strchr|strrchr|strcmp|strncmp|strcspn|strspn)
		return 0 ;;
	# the same under _FORTIFY_SOURCE (Debian's package build): a size
	# check whose failure aborts, as abort does
	__memcpy_chk|__memmove_chk|__memset_chk)
		return 0 ;;
	# thin system call wrappers (and CPU_COUNT's bit count)
	syscall|ioctl|close|read|write|poll|nanosleep|sched_yield|clock_gettime|prctl|__errno_location)
		return 0 ;;
	sched_getaffinity|sched_setaffinity|__sched_cpucount)
		return 0 ;;
	# the library's own locks and signal masks
	pthread_mutex_lock|pthread_mutex_unlock|pthread_mutex_trylock)
		return 0 ;;
	pthread_rwlock_rdlock|pthread_rwlock_wrlock|pthread_rwlock_unlock|pthread_rwlock_tryrdlock|pthread_rwlock_trywrlock)
		return 0 ;;
	pthread_sigmask|sigfillset|sigemptyset|sigaddset|sigdelset)
		return 0 ;;
	abort)
		return 0 ;;
	esac
	case $1:$2 in
	comp:LZ4_create*|comp:LZ4_free*|comp:ZSTD_create*|comp:ZSTD_free*|comp:ZSTD_compress|comp:ZSTD_decompress)
		return 2 ;;
	comp:LZ4_*|comp:ZSTD_*)
		return 0 ;;
	comp:lzo1x_1_15_compress|comp:lzo1x_decompress_safe)
		return 0 ;;
	comp:__lzo_init_v2)
		return 1 ;;
	start:getauxval|start:pthread_atfork|start:__register_atfork|start:__dso_handle|start:pthread_create|start:pthread_attr_*|start:pthread_rwlock_init|start:pthread_rwlockattr_*)
		return 1 ;;
	engine:dl_iterate_phdr|bindnow:dl_iterate_phdr|bindnow:dladdr1)
		return 1 ;;
	dynlib:dlopen|dynlib:dlsym|dynlib:dlerror|dynlib:dlclose|dynlib:dlinfo)
		return 1 ;;
	store:sysconf|store:pthread_mutex_init|store:pthread_mutex_destroy)
		return 1 ;;
	zsmalloc:pthread_mutex_init|zsmalloc:pthread_mutexattr_*|zsmalloc:pthread_mutex_destroy)
		return 1 ;;
	options:environ)
		return 0 ;;
	# the group's token read and set for the programs a member runs, in
	# the constructor (src/reclaim/group.c)
	group:environ)
		return 1 ;;
	# the second tier: its file's I/O and libsodium's pure functions on
	# any path; opening, checking and seeding at start-up only
	backing:pread|backing:pwrite|backing:fallocate|backing:sync_file_range|backing:posix_fadvise|backing:fstat)
		return 0 ;;
	backing:crypto_aead_xchacha20poly1305_ietf_*|backing:crypto_generichash_*|backing:sodium_memcmp)
		return 0 ;;
	backing:crypto_aead_aes256gcm_encrypt_detached_afternm|backing:crypto_aead_aes256gcm_decrypt_detached_afternm)
		return 0 ;;
	backing:crypto_aead_aes256gcm_is_available|backing:crypto_aead_aes256gcm_beforenm)
		return 1 ;;
	backing:open|backing:stat|backing:statfs|backing:statvfs|backing:access|backing:mkostemp|backing:unlink)
		return 1 ;;
	backing:fchmod|backing:fcntl|backing:sodium_init|backing:randombytes_buf|backing:sodium_memzero)
		return 1 ;;
	backing:pthread_mutex_init|backing:pthread_mutex_destroy)
		return 1 ;;
	growth:__libc_malloc|growth:__libc_calloc|growth:__libc_realloc|growth:__curbrk|growth:_DYNAMIC|elfsym:_r_debug|start:_r_debug)
		return 0 ;;
	# libunwind (local unwinding), only on the statistics thread after
	# every library lock is dropped (attrib_collect -> attrib_name) and
	# in a crash report of a process that is dying (crash_backtrace)
	unwind:_UL*|unwind:_U*_getcontext)
		return 0 ;;
	esac
	return 2
}

# The functions (base names: GCC's .part/.cold/.isra suffixes are removed)
# that may reference a start-up-only symbol of an object.
startup_fns() {
	case $1 in
	start) echo "start_init start_run start_ctor start_handlers start_thread start_handler_cpus" ;;
	engine) echo "engine_note_objects" ;;
	bindnow) echo "bindnow_closure" ;;
	dynlib) echo "dynlib_try" ;;
	backing) echo "backing_open backing_create backing_check_dir backing_cap backing_dir_on_disk backing_close backing_fork_child" ;;
	store) echo "zswap_store_create store_default_workspaces zswap_store_destroy zswap_store_fork_child" ;;
	comp) echo "comp_ws_init" ;;
	zsmalloc) echo "zs_create_pool zs_lock_init zs_destroy_pool" ;;
	group) echo "group_init group_env group_env_set" ;;
	*) echo "" ;;
	esac
}

# check_obj OBJECT BASE: print one FAIL line per violation; returns 1 if any.
check_obj() {
	obj=$1
	base=$2
	bad=0
	nm -u "$obj" | awk '{ print $NF }' | sed 's/@.*//' | sort -u > "$tmp/undef"
	# "function symbol" for every relocation in code.
	objdump -dr --no-show-raw-insn "$obj" 2>/dev/null | awk '
		/^[0-9a-f]+ <.*>:$/ { fn = substr($2, 2, length($2) - 3); sub(/\..*/, "", fn); next }
		/^[ \t]+[0-9a-f]+: R_[A-Z0-9_]+[ \t]/ { s = $NF; sub(/[-+]0x[0-9a-f]+$/, "", s); sub(/@.*/, "", s); print fn, s }
	' | sort -u > "$tmp/refs"
	fns=$(startup_fns "$base")
	while read -r sym; do
		[ -n "$sym" ] || continue
		grep -qxF -- "$sym" "$tmp/own" && continue
		allowed "$base" "$sym"
		case $? in
		0) ;;
		1)
			users=$(awk -v s="$sym" '$2 == s { print $1 }' "$tmp/refs" | sort -u)
			if [ -z "$users" ]; then
				echo "FAIL: $base.o refers to $sym outside code (a table?): allowed only in start-up functions ($fns)"
				bad=1
			fi
			for u in $users; do
				case " $fns " in
				*" $u "*) ;;
				*) echo "FAIL: $base.o: $u() calls $sym, allowed only in start-up code ($fns)"
				   bad=1 ;;
				esac
			done ;;
		*)
			users=$(awk -v s="$sym" '$2 == s { print $1 "()" }' "$tmp/refs" | sort -u | tr '\n' ' ' | sed 's/ $//')
			echo "FAIL: $base.o calls $sym${users:+ (from $users)}: not allowed in libzswap (it may allocate, lock what the program holds, or use stdio, the environment or the loader)"
			bad=1 ;;
		esac
	done < "$tmp/undef"
	# The functions a table asks dynlib for by name (a string in the
	# object's read-only data): each must be allowed as a call from this
	# object would be.
	case $base in
	comp|backing|unwind)
		objcopy -O binary --only-section='.rodata*' "$obj" "$tmp/rodata" 2>/dev/null || : > "$tmp/rodata"
		strings -a "$tmp/rodata" | grep -xE '(ZSTD|LZ4)_[A-Za-z0-9_]+|_*lzo[A-Za-z0-9_]*|sodium_[a-z_]+|crypto_[a-z0-9_]+|randombytes_[a-z_]+|_U[A-Za-z0-9_]+' |
			sort -u > "$tmp/named"
		while read -r sym; do
			allowed "$base" "$sym"
			[ $? -le 1 ] && continue
			echo "FAIL: $base.o asks dynlib for $sym: not allowed in libzswap"
			bad=1
		done < "$tmp/named" ;;
	esac
	return $bad
}

# --- the checker must be able to fail --------------------------------------
cc=${CC:-cc}
if command -v "$cc" >/dev/null 2>&1; then
	cat > "$tmp/bad_alloc.c" <<'EOF'
#include <stdlib.h>
void *evict_scratch(unsigned long n);
void *evict_scratch(unsigned long n) { return malloc(n); }
EOF
	cat > "$tmp/bad_thread.c" <<'EOF'
#include <pthread.h>
int start_scratch(void *(*fn)(void *));
int start_scratch(void *(*fn)(void *)) { pthread_t t; return pthread_create(&t, 0, fn, 0); }
EOF
	"$cc" -O2 -fPIC -c -o "$tmp/bad_alloc.o" "$tmp/bad_alloc.c" &&
	"$cc" -O2 -fPIC -pthread -c -o "$tmp/bad_thread.o" "$tmp/bad_thread.c" ||
		{ say "ERROR: $cc cannot compile the checker's self-test"; exit 99; }
	if check_obj "$tmp/bad_alloc.o" evict > "$tmp/self1"; then
		say "ERROR: the checker accepted an object that calls malloc"; exit 99
	fi
	if check_obj "$tmp/bad_thread.o" start > "$tmp/self2"; then
		say "ERROR: the checker accepted pthread_create outside start.c's start-up code"; exit 99
	fi
	grep -q 'calls malloc' "$tmp/self1" && grep -q 'start_scratch() calls pthread_create' "$tmp/self2" ||
		{ say "ERROR: the checker's self-test failed for the wrong reason:"; cat "$tmp/self1" "$tmp/self2" >&2; exit 99; }
else
	say "note: no C compiler ($cc): the checker's self-test is skipped"
fi

# --- the library's objects ------------------------------------------------
fail=0
n=0
for obj in $objs; do
	base=$(basename "$obj" .o)
	n=$((n + 1))
	check_obj "$obj" "$base" >&2 || fail=1
done

# --- the linked library: the worst offenders, whatever their origin ----------
if [ -f "$lib" ]; then
	nm -D --undefined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' > "$tmp/so_undef"
	for s in $(cat "$tmp/so_undef"); do
		case $s in
		malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|\
		strdup|strndup|*printf*|puts|fputs|fputc|putc|putchar|fopen*|fdopen|fclose|fwrite|fread|fflush|fgets|\
		dlsym|dlopen|dlerror)
			# dynlib.o's alone, in its start-up function (checked above)
			for o in $objs; do
				[ "$(basename "$o")" = dynlib.o ] && continue
				if nm -u "$o" | awk '{ print $NF }' | sed 's/@.*//' | grep -qxF "$s"; then
					echo "FAIL: libzswap.so imports $s (from $(basename "$o"))" >&2
					fail=1
				fi
			done ;;
		getenv|secure_getenv|setenv|putenv|dlvsym|dladdr|__tls_get_addr|\
		qsort|atexit|__cxa_atexit|exit|syslog|strerror|opendir|backtrace)
			echo "FAIL: libzswap.so imports $s" >&2
			fail=1 ;;
		esac
	done
else
	say "ERROR: $lib is not built"
	exit 99
fi

[ "$fail" = 0 ] && say "ok: $n objects of libzswap.so and the library's imports are clean"
exit $fail
