/*
 * libgso: build TCP/UDP super-segments, segment them like the Linux kernel
 * (software GSO) or describe them to a device that segments (TSO), and pace
 * their release.
 *
 * This umbrella header includes every public header of the pure library.
 *
 * Conventions, for every call:
 *  - Functions return 0 (or a count) on success and a negative errno on
 *    failure.  A failed call writes nothing to its outputs.
 *  - Options structs start with `size_t sz` and are declared with
 *    GSO_OPTS(type, name, ...); zero always means "the default".  Results
 *    and per-call descriptors the caller allocates start with `size_t sz`
 *    too, set by the caller; the library fills them up to sz.
 *  - The headers are ISO C11 and C++11; GSO_OPTS in C++ needs C++20
 *    (<gso/common.h> says why and how).
 *  - The library never allocates on the data path, never prints, never exits.
 *  - NULL pointers: a function that returns int answers -EINVAL for a
 *    NULL pointer it needs (one the header calls optional takes its
 *    documented meaning: NULL options are the defaults); __destroy and
 *    reset calls take NULL as a no-op; a getter or lookup that returns a
 *    value says next to it what NULL gives (0, UINT64_MAX, NULL); the
 *    checksum helpers, which have no error value, say "must not be NULL"
 *    (a contract, not checked).
 *
 * Error numbers used across the library:
 *  -EINVAL           bad argument (NULL, option out of range, MSS 0, unknown flag,
 *                    non-zero unknown tail in an options struct)
 *  -ENODATA          buffer shorter than the headers it must hold (truncated)
 *  -EBADMSG          malformed header (bad version, IHL/doff too small,
 *                    lengths that contradict each other or the buffer)
 *  -EPROTONOSUPPORT  a protocol the library does not handle (non-IP
 *                    ethertype, stacked VLANs, IPv6 extension headers,
 *                    IPv4 fragments, L4 other than TCP/UDP)
 *  -EMSGSIZE         super-segment larger than allowed (IP datagram > 65535,
 *                    header longer than GSO_MAX_HDR_LEN)
 *  -E2BIG            more segments than the limit in force
 *  -ENOSPC           caller's output array has too few entries
 *  -ENOBUFS          a caller's buffer is too small for the frame to be written
 *  -ENOTSUP          requested implementation/feature not available here
 */
#ifndef GSO_GSO_H
#define GSO_GSO_H

#include <gso/common.h>
#include <gso/csum.h>
#include <gso/tmpl.h>
#include <gso/seg.h>
#include <gso/offload.h>
#include <gso/pacer.h>
#include <gso/sched.h>
#include <gso/cc.h>
#include <gso/flowq.h>

#endif
