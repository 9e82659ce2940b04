#!/bin/bash
# tests/vm/boot.sh VMLINUZ SCRIPT: boot VMLINUZ under QEMU (software
# emulation: /dev/kvm here hangs) with an initramfs of busybox, the static
# gpumemtrace and the static test workload, run SCRIPT (a shell script) as
# root in it, and print what SCRIPT printed. The guest powers off after.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
kernel=$1 script=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/initrd/{bin,proc,sys,dev,tmp}
cp /bin/busybox "$root/gpumemtrace" "$tmp/initrd/bin/"
cp "$root/.output/tests/workload-static" "$tmp/initrd/bin/workload"
cp "$script" "$tmp/initrd/test.sh"
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
timeout 300 qemu-system-x86_64 -accel tcg -m 768 -smp 2 -nographic -no-reboot \
	-kernel "$kernel" -initrd "$tmp/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1" </dev/null >"$tmp/console" 2>&1 || true
tr -d '\r' <"$tmp/console" | sed -n '/=== begin/,/^=== end/p' | sed '1d'
