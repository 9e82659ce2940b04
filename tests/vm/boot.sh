#!/bin/bash
# tests/vm/boot.sh VMLINUZ SCRIPT: boot VMLINUZ under QEMU (software
# emulation: /dev/kvm here hangs) with an initramfs of busybox, the static
# gpumemtrace and the static test programs, run SCRIPT (a shell script) as
# root in it, and print what SCRIPT printed. The guest powers off after.
# MODULES="bochs amdgpu": those modules of the kernel's package and what they
# need go in /lib/gmt-modules, in load order (list: /lib/gmt-modules/order).
# VGA_MB: the bochs display's VRAM (default 16).
# ARCH=arm64: an arm64 kernel (tests/vm/kernel.sh with ARCH=arm64) under
# qemu-system-aarch64's virt machine, with `make ARCH=arm64`'s binaries and
# the arm64 busybox that tools/arm64-sysroot.sh unpacks.
# EXTRA="SRC:DST ...": files or folders copied into the guest as DST (a path
# in it; links followed), e.g. a program with its libraries and a model.
# BOOT_TIMEOUT: seconds a boot may take (default 110: twice that fits a
# test's 240, for the boot again below).
# DISK=IMAGE: a raw disk image attached as a virtio drive, /dev/vda in the
# guest (MODULES=virtio_blk), e.g. files the page cache can evict, which
# the initramfs's cannot be (x86 only).
# CPU=MODEL: QEMU's -cpu (x86 only; default QEMU's qemu64), e.g. max for
# the AVX2 and FMA that an x86-64 llama.cpp build needs.
set -Eeu
root=$(cd "$(dirname "$0")/../.." && pwd)
kernel=$1 script=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'echo "# boot.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
mkdir -p "$tmp"/initrd/{bin,proc,sys,dev,tmp}
out=$root/.output busybox=/bin/busybox bin=$root
if [ "${ARCH:-x86}" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
	out=$root/.output/arm64 bin=$root/.output/arm64
	busybox=$("$root/tools/arm64-sysroot.sh")/bin/busybox
fi
cp "$busybox" "$bin/gpumemtrace" "$tmp/initrd/bin/"
cp "$out/tests/workload-static" "$tmp/initrd/bin/workload"
cp "$out/tests/drmflip-static" "$tmp/initrd/bin/drmflip"
cp "$script" "$tmp/initrd/test.sh"
for e in ${EXTRA:-}; do
	mkdir -p "$tmp/initrd$(dirname "${e#*:}")"
	cp -rL "${e%%:*}" "$tmp/initrd${e#*:}"
done
if [ -n "${MODULES:-}" ]; then
	export PATH=$PATH:/sbin:/usr/sbin
	kdir=$(dirname "$(dirname "$kernel")")
	ver=$(ls "$kdir/lib/modules")
	[ -e "$kdir/lib/modules/$ver/modules.dep" ] || depmod -b "$kdir" "$ver"
	mkdir -p "$tmp/initrd/lib/gmt-modules"
	for m in $MODULES; do
		modprobe -d "$kdir" -S "$ver" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ {print $2}' | while read -r p; do
		n=$(basename "$p" .xz)
		case $p in
		*.xz) xz -dc "$p" ;;
		*) cat "$p" ;;
		esac >"$tmp/initrd/lib/gmt-modules/$n"
		echo "$n" >>"$tmp/initrd/lib/gmt-modules/order"
	done
fi
cat >"$tmp/initrd/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "=== begin"
sh /test.sh
echo "=== end $?"
poweroff -f
INIT
chmod +x "$tmp/initrd/init"
(cd "$tmp/initrd" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$tmp/initrd.gz"
# One boot; a guest that never reached its script (a boot that failed
# before gpumemtrace ran, seen once in 56 runs under TCG) says how QEMU ended
# and what the kernel last printed, as "# " lines that tests/run.sh shows,
# and is booted once more: nothing of the tool is judged by that boot.
boot() {
	local rc=0 start=$SECONDS
	if [ "${ARCH:-x86}" = arm64 ]; then
		# pauth-impdef: QEMU's own pointer authentication, much cheaper
		# under TCG than the architected one
		timeout "${BOOT_TIMEOUT:-110}" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -accel tcg \
			-m 1024 -smp 2 -nographic -no-reboot \
			-kernel "$kernel" -initrd "$tmp/initrd.gz" \
			-append "console=ttyAMA0 quiet panic=-1 softlockup_panic=1" </dev/null >"$tmp/console" 2>&1 || rc=$?
	else
		local more=()
		[ -z "${CPU:-}" ] || more+=(-cpu "$CPU")
		[ -z "${DISK:-}" ] || more+=(-drive "file=$DISK,format=raw,if=virtio")
		timeout "${BOOT_TIMEOUT:-110}" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot \
			"${more[@]}" -vga std -global VGA.vgamem_mb="${VGA_MB:-16}" \
			-kernel "$kernel" -initrd "$tmp/initrd.gz" \
			-append "console=ttyS0 quiet panic=-1 softlockup_panic=1" </dev/null >"$tmp/console" 2>&1 || rc=$?
	fi
	# begun: the tool ran, and is judged; one that never ended (QEMU's
	# timeout: a stall of the guest, or a hang in it) says where it was
	if grep -q '=== begin' "$tmp/console"; then
		# TCG running kernel code while the kernel rewrites it (a tracepoint
		# attached, a static key flipped; -cpu max: about a boot in 16) oopses
		# where the code was patched, or spins there (a vCPU at the first
		# byte of handle_mm_fault as its fexit was attached, a boot in 12 of
		# the 6.1 TTM test): softlockup_panic makes the spin a panic too, and
		# either is booted again; a panic or lockup the tool made would come
		# again
		if ! grep -q '^=== end' "$tmp/console" && grep -q 'Kernel panic' "$tmp/console"; then
			echo "# boot.sh: the guest's kernel panicked ($(grep -m1 -o 'RIP: 0010:[^ ]*' "$tmp/console"), after $((SECONDS - start)) s); booting again" >&2
			return 1
		fi
		grep -q '^=== end' "$tmp/console" || {
			echo "# boot.sh: the guest's script never ended (QEMU status $rc after $((SECONDS - start)) s); its console ends:"
			tr -d '\r' <"$tmp/console" | tail -25 | sed 's/^/# console: /'
		} >&2
		return 0
	fi
	{
		echo "# boot.sh: the guest never ran its script (QEMU status $rc after $((SECONDS - start)) s); its console ends:"
		tr -d '\r' <"$tmp/console" | tail -25 | sed 's/^/# console: /'
	} >&2
	return 1
}
boot || boot || true
tr -d '\r' <"$tmp/console" | sed -n '/=== begin/,/^=== end/p' | sed '1d'
