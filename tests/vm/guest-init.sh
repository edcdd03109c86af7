#!/bb/busybox sh
# /init of the test guest (tests/vm/guest-build.sh packs it with busybox).
# Loads the modules, mounts the host's /usr read-only and the project's
# source and build folders at the paths they have on the host (virtio-9p),
# brings eth0 up with the address the host gave on the command line, runs
# the run folder's guest.sh with bash from the host's /usr, stores its exit
# status in guest.rc and powers off.  Everything it prints goes to the
# serial console, which the host logs.
/bb/busybox --install -s /bb
export PATH=/usr/sbin:/usr/bin:/bb

mkdir -p /proc /sys /dev /tmp /run /etc /usr /mnt
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null

arg() { sed -n "s/.*gsovm\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
RUN=$(arg run)
REPO=$(arg repo)
BUILD=$(arg build)
ADDR=$(arg addr)
PEER=$(arg peer)

fail() {
	echo "gsovm: $*"
	poweroff -f
}

while read -r m; do
	insmod "/modules/$m.ko" || fail "insmod $m failed"
done </modules/order

P9="trans=virtio,version=9p2000.L,msize=262144"
mount -t 9p -o "$P9,ro,cache=loose" usr /usr || fail "cannot mount the host's /usr"
# Debian 12 has a merged /usr.
for d in bin sbin lib lib64; do ln -s "usr/$d" "/$d"; done
mkdir -p "$REPO"
mount -t 9p -o "$P9,ro,cache=loose" repo "$REPO" || fail "cannot mount $REPO"
mkdir -p "$BUILD" 2>/dev/null
mount -t 9p -o "$P9" build "$BUILD" || fail "cannot mount $BUILD"

echo "root:x:0:0:root:/root:/bin/sh" >/etc/passwd
echo "root:x:0:" >/etc/group
echo "127.0.0.1 localhost" >/etc/hosts
ip link set lo up
ip link set eth0 up
[ -n "$ADDR" ] && ip addr add "$ADDR" dev eth0
# QEMU's e1000 negotiates the link for a while after the driver opens it;
# what is sent before carrier comes up is counted as sent and lost.
for i in $(seq 100); do
	[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] && break
	sleep 0.05
done
[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] || echo "gsovm: eth0 has no carrier after 5 s"
# Even with carrier up the first frames can still be lost inside QEMU's
# e1000: wait until the host answers.
if [ -n "$PEER" ]; then
	for i in $(seq 20); do
		ping -c 1 -W 1 "$PEER" >/dev/null 2>&1 && break
	done || echo "gsovm: $PEER does not answer"
fi

echo "gsovm: up, kernel $(uname -r), running $RUN/guest.sh"
cd "$RUN" || fail "no run folder $RUN"
bash "$RUN/guest.sh" >"$RUN/guest.log" 2>&1
echo $? >"$RUN/guest.rc"
sync
echo "gsovm: guest.sh exited $(cat "$RUN/guest.rc")"
umount "$BUILD" 2>/dev/null
poweroff -f
