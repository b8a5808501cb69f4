// SPDX-License-Identifier: Apache-2.0
/*
 * A session (`cordon create ROOTFS`): a sandbox with no command, which
 * stays up for `cordon exec` until `cordon rm`, its idle timeout or its
 * lifetime cap, whichever comes first.
 *
 * Its workload is the idle program: a few instructions that wait for a
 * signal, made here as a sealed memfd and executed by the workload at the
 * end of its confinement (confine.c). It holds the sandbox's nested user
 * and network namespaces, which cordon exec joins, and keeps nothing of
 * cordon's memory (the rootfs need not hold a libc for it). Killing it
 * ends the session, as the workload's end ends a run.
 *
 * The monitor keeps one timer for both limits. A `cordon exec` tells the
 * monitor it runs (MONITOR_EXEC on the control socket) and holds the
 * connection until it ends: while one is held the session is not idle.
 * The exec does not wait for an answer, so the monitor may not have seen
 * its request yet when the idle timeout falls due: before it ends the
 * session it takes every connection in its backlog and every request in
 * their queues, and a connection still silent counts as an exec (one
 * that connected is past its connect, about to send). An exec that
 * connects after that finds the session ending, and its process ends
 * with it.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>

#include "sandbox-internal.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/*
 * The idle program's code for each architecture cordon builds on: a wait
 * for a signal, again on EINTR (a handled signal: there is none), and
 * exit_group(125) on anything else (a filter's refusal). Written here as
 * the instructions' bytes, each checked against an assembler's encoding
 * (llvm-mc --show-encoding, the listing beside each); the program needs
 * nothing of the rootfs, not even a libc.
 */
#include <elf.h>

#if defined(__x86_64__)
/*
 *   again: mov  $34, %eax        pause()
 *          syscall
 *          cmp  $-4, %rax
 *          je   again
 *          mov  $125, %edi
 *          mov  $231, %eax       exit_group
 *          syscall
 */
static const unsigned char idle_code[] = {
	0xb8, 0x22, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x83, 0xf8, 0xfc, 0x74, 0xf3,
	0xbf, 0x7d, 0x00, 0x00, 0x00, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05,
};
#define IDLE_MACHINE EM_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * No pause(2) on the generic table: ppoll(NULL, 0, NULL, NULL, 0) waits
 * for a signal alike.
 *
 *   again: mov  x0, #0 ... mov x4, #0   d2800000 .. d2800004
 *          mov  x8, #73                  d2800928  ppoll
 *          svc  #0                       d4000001
 *          cmn  x0, #4                   b100101f  x0 == -EINTR?
 *          b.eq again                    54ffff00
 *          mov  x0, #125                 d2800fa0
 *          mov  x8, #94                  d2800bc8  exit_group
 *          svc  #0                       d4000001
 */
static const unsigned char idle_code[] = {
	0x00, 0x00, 0x80, 0xd2, 0x01, 0x00, 0x80, 0xd2, 0x02, 0x00, 0x80, 0xd2, 0x03, 0x00,
	0x80, 0xd2, 0x04, 0x00, 0x80, 0xd2, 0x28, 0x09, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
	0x1f, 0x10, 0x00, 0xb1, 0x00, 0xff, 0xff, 0x54, 0xa0, 0x0f, 0x80, 0xd2, 0xc8, 0x0b,
	0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
};
#define IDLE_MACHINE EM_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
/*
 *   again: li   a0, 0 ... li a4, 0      00000513 .. 00000713
 *          li   a7, 73                  04900893  ppoll
 *          ecall                        00000073
 *          li   t0, -4                  ffc00293
 *          beq  a0, t0, again           fe5500e3
 *          li   a0, 125                 07d00513
 *          li   a7, 94                  05e00893  exit_group
 *          ecall                        00000073
 */
static const unsigned char idle_code[] = {
	0x13, 0x05, 0x00, 0x00, 0x93, 0x05, 0x00, 0x00, 0x13, 0x06, 0x00, 0x00, 0x93, 0x06,
	0x00, 0x00, 0x13, 0x07, 0x00, 0x00, 0x93, 0x08, 0x90, 0x04, 0x73, 0x00, 0x00, 0x00,
	0x93, 0x02, 0xc0, 0xff, 0xe3, 0x00, 0x55, 0xfe, 0x13, 0x05, 0xd0, 0x07, 0x93, 0x08,
	0xe0, 0x05, 0x73, 0x00, 0x00, 0x00,
};
#define IDLE_MACHINE EM_RISCV
#endif

/*
 * Loaded at 64 KiB (mmap_min_addr's usual floor), aligned for any page
 * size up to 64 KiB (arm64's largest): the segment's offset 0 and address
 * agree modulo the page whatever it is.
 */
#define IDLE_BASE 0x10000ULL
#define IDLE_ALIGN 0x10000ULL

/* The idle program: one ELF header, one read-execute segment, the code. */
int sandbox_session_program(struct cordon_error *err)
{
#ifdef IDLE_MACHINE
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		unsigned char code[sizeof(idle_code)];
	} __attribute__((packed)) image = {
		.eh = {
			.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				     EV_CURRENT, ELFOSABI_SYSV },
			.e_type = ET_EXEC,
			.e_machine = IDLE_MACHINE,
			.e_version = EV_CURRENT,
			.e_entry = IDLE_BASE + sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr),
			.e_phoff = sizeof(Elf64_Ehdr),
			.e_ehsize = sizeof(Elf64_Ehdr),
			.e_phentsize = sizeof(Elf64_Phdr),
			.e_phnum = 1,
		},
		.ph = {
			.p_type = PT_LOAD,
			.p_flags = PF_R | PF_X,
			.p_offset = 0,
			.p_vaddr = IDLE_BASE,
			.p_paddr = IDLE_BASE,
			.p_filesz = sizeof(image),
			.p_memsz = sizeof(image),
			.p_align = IDLE_ALIGN,
		},
	};
	int fd;

	memcpy(image.code, idle_code, sizeof(idle_code));
	fd = memfd_create(CORDON_SESSION_TITLE, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* a kernel before MFD_EXEC */
		fd = memfd_create(CORDON_SESSION_TITLE, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "the session's idle program");
	/* Sealed: nothing that holds the fd (or reaches it in the sandbox) can change it. */
	if (cordon_write_all(fd, &image, sizeof(image)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
		int e = errno;

		close(fd);
		return cordon_error_set(err, CORDON_E_INTERNAL, e, "the session's idle program");
	}
	return fd;
#else
	return cordon_error_set(err, CORDON_E_INTERNAL, ENOSYS,
				"sessions: no idle program for this architecture (x86-64, "
				"aarch64 and riscv64 have one)");
#endif
}

static uint64_t now_ms(void)
{
	return cordon_now_mono_us() / 1000;
}

/* No exec runs, none is about to (a silent connection), none ran untracked. */
static bool session_idle(const struct supervisor *sv)
{
	return sv->spec->idle_timeout_ms && sv->n_execs == 0 && !sv->session_untracked &&
	       lifecycle_clients_pending(sv) == 0;
}

/* The next deadline: the lifetime cap, or the idle timeout while no exec runs. */
static void session_arm(struct supervisor *sv)
{
	const struct cordon_spec *spec = sv->spec;
	uint64_t at = UINT64_MAX;
	struct itimerspec its = { 0 };

	if (sv->session_timer < 0)
		return;
	if (spec->max_lifetime_ms)
		at = sv->session_start_ms + spec->max_lifetime_ms;
	if (session_idle(sv) && sv->idle_since_ms + spec->idle_timeout_ms < at)
		at = sv->idle_since_ms + spec->idle_timeout_ms;
	if (at != UINT64_MAX) {
		/* CLOCK_MONOTONIC in ms, as cordon_now_mono_us counts it. */
		its.it_value.tv_sec = (time_t)(at / 1000);
		its.it_value.tv_nsec = (long)(at % 1000) * 1000000;
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(sv->session_timer, TFD_TIMER_ABSTIME, &its, NULL);
}

int session_start(struct supervisor *sv, struct cordon_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &sv->session_timer };

	for (size_t i = 0; i < SESSION_EXECS_MAX; i++)
		sv->execs[i] = -1;
	sv->session_start_ms = sv->idle_since_ms = now_ms();
	if (!sv->spec->max_lifetime_ms && !sv->spec->idle_timeout_ms)
		return 0;
	sv->session_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sv->session_timer < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "the session's timer");
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->session_timer, &ev) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll_ctl");
	session_arm(sv);
	return 0;
}

void session_end(struct supervisor *sv, const char *why)
{
	if (sv->child_done || sv->session_ending)
		return;
	sv->session_ending = true;
	cordon_debug("session %s ends: %s", sv->state->id, why);
	/* The init's end ends its pid namespace: every exec'd process goes with it. */
	cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
}

static void session_timer_fired(struct supervisor *sv)
{
	const struct cordon_spec *spec = sv->spec;
	uint64_t ticks, now = now_ms();

	if (read(sv->session_timer, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks))
		return;
	if (spec->max_lifetime_ms && now >= sv->session_start_ms + spec->max_lifetime_ms) {
		session_end(sv, "its lifetime cap (--max-lifetime) passed");
		return;
	}
	/* The last look: an exec that connected before now is counted (see the top). */
	if (session_idle(sv) && now >= sv->idle_since_ms + spec->idle_timeout_ms)
		lifecycle_take_pending(sv);
	if (session_idle(sv) && now >= sv->idle_since_ms + spec->idle_timeout_ms)
		session_end(sv, "idle for its --idle-timeout");
	else
		session_arm(sv);
}

void session_rearm(struct supervisor *sv)
{
	if (sv->spec->session && !sv->session_ending && !sv->child_done)
		session_arm(sv);
}

int session_exec_begin(struct supervisor *sv, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };

	for (size_t i = 0; i < SESSION_EXECS_MAX; i++) {
		if (sv->execs[i] >= 0)
			continue;
		ev.data.ptr = &sv->execs[i];
		if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			return -errno;
		sv->execs[i] = fd;
		sv->n_execs++;
		session_arm(sv);
		return 0;
	}
	return -EMFILE;
}

/* An exec's connection spoke (it says nothing more) or hung up: it ended. */
static void session_exec_end(struct supervisor *sv, int *slot)
{
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, *slot, NULL);
	cordon_closep(slot);
	sv->n_execs--;
	sandbox_audit_exec_end(sv);
	if (sv->n_execs == 0)
		sv->idle_since_ms = now_ms();
	session_arm(sv);
}

bool session_dispatch(struct supervisor *sv, void *tag)
{
	if (!sv->spec->session)
		return false;
	if (tag == &sv->session_timer) {
		session_timer_fired(sv);
		return true;
	}
	if ((int *)tag >= sv->execs && (int *)tag < sv->execs + SESSION_EXECS_MAX) {
		if (*(int *)tag >= 0)
			session_exec_end(sv, (int *)tag);
		return true;
	}
	return false;
}

void session_finish(struct supervisor *sv)
{
	for (size_t i = 0; sv->spec->session && i < SESSION_EXECS_MAX; i++)
		cordon_closep(&sv->execs[i]);
	sv->n_execs = 0;
	cordon_closep(&sv->session_timer);
}
