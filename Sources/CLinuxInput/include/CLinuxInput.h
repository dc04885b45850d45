// Kernel input UAPI for Swift: the request numbers below are macros built from _IOR/_IOC,
// which Swift cannot import, so they are exposed as inline functions.
#ifndef CLINUXINPUT_H
#define CLINUXINPUT_H

#include <linux/input.h>
#include <linux/uinput.h>
#include <linux/uhid.h>
#include <linux/hidraw.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Lowers (or, with privilege, raises) the calling thread's nice value: Linux schedules threads
/// by their own, and glibc's gettid() is not visible to Swift.
static inline int padgate_set_thread_niceness(int niceness) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), niceness);
}

#include <sched.h>
#ifndef SCHED_IDLE
#define SCHED_IDLE 5  /* linux/sched.h; glibc shows it only with _GNU_SOURCE */
#endif
#ifndef SCHED_FIFO
#define SCHED_FIFO 1
#endif
#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000  /* linux/sched.h */
#endif
/// The calling thread's policy (flags included) and priority, for putting them back; -1 on failure.
static inline int padgate_get_thread_scheduler(int *priority) {
    struct sched_param param = { .sched_priority = 0 };
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (sched_getparam(tid, &param) != 0) return -1;
    *priority = param.sched_priority;
    return sched_getscheduler(tid);
}
static inline int padgate_set_thread_scheduler(int policy, int priority) {
    struct sched_param param = { .sched_priority = priority };
    return sched_setscheduler((pid_t)syscall(SYS_gettid), policy, &param);
}
/// Puts the calling thread in SCHED_FIFO at `priority`; threads it starts later get the default
/// policy (SCHED_RESET_ON_FORK). Needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least `priority`.
static inline int padgate_set_thread_realtime(int priority) {
    return padgate_set_thread_scheduler(SCHED_FIFO | SCHED_RESET_ON_FORK, priority);
}
/// Puts the calling thread in SCHED_IDLE: it runs only when nothing else wants the CPU.
static inline int padgate_set_thread_idle_class(void) { return padgate_set_thread_scheduler(SCHED_IDLE, 0); }

static inline unsigned long padgate_HIDIOCGRDESCSIZE(void) { return HIDIOCGRDESCSIZE; }
static inline unsigned long padgate_HIDIOCGRDESC(void) { return HIDIOCGRDESC; }
static inline unsigned long padgate_HIDIOCGRAWINFO(void) { return HIDIOCGRAWINFO; }
static inline unsigned long padgate_HIDIOCGRAWNAME(int len) { return HIDIOCGRAWNAME(len); }
static inline unsigned long padgate_HIDIOCGRAWUNIQ(int len) { return HIDIOCGRAWUNIQ(len); }
static inline unsigned long padgate_HIDIOCGFEATURE(int len) { return HIDIOCGFEATURE(len); }
static inline unsigned long padgate_HIDIOCSFEATURE(int len) { return HIDIOCSFEATURE(len); }
static inline unsigned long padgate_EVIOCGRAB(void) { return EVIOCGRAB; }
static inline unsigned long padgate_EVIOCSFF(void) { return EVIOCSFF; }
static inline unsigned long padgate_EVIOCRMFF(void) { return EVIOCRMFF; }
static inline unsigned long padgate_UI_SET_PHYS(void) { return UI_SET_PHYS; }

// Thin ioctl wrappers: Swift cannot call the variadic ioctl(2) directly.
static inline int padgate_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }
static inline int padgate_ioctl_int(int fd, unsigned long request, int arg) { return ioctl(fd, request, arg); }

// struct uhid_event is a packed union; these give Swift fixed offsets into it.
static inline size_t padgate_uhid_event_size(void) { return sizeof(struct uhid_event); }
static inline size_t padgate_uhid_offset_create2_rd_size(void) { return offsetof(struct uhid_event, u.create2.rd_size); }
static inline size_t padgate_uhid_offset_create2_rd_data(void) { return offsetof(struct uhid_event, u.create2.rd_data); }
static inline size_t padgate_uhid_offset_output_size(void) { return offsetof(struct uhid_event, u.output.size); }
static inline size_t padgate_uhid_offset_output_rtype(void) { return offsetof(struct uhid_event, u.output.rtype); }
static inline size_t padgate_uhid_offset_get_report_reply_data(void) { return offsetof(struct uhid_event, u.get_report_reply.data); }
static inline size_t padgate_uhid_offset_set_report_data(void) { return offsetof(struct uhid_event, u.set_report.data); }

#endif
