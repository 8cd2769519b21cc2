// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_relay.c - the relay channel's callbacks, and the operations of the
 * cpuN files through which readers take the records.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/irqflags.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include "kmt_compat.h"
#include "kmt_internal.h"

/*
 * relay's own file operations, forwarded, in a structure owned by this
 * module: an open cpuN file holds a reference on the module, so rmmod
 * fails while kmemtraced reads instead of freeing code under it.
 * open, release, read and poll are relay's core (kmt_check_relay_fops()
 * refuses to load without them); mmap and splice are forwarded only
 * where this kernel's relay has them: splice_read is gone from 6.8, and
 * mmap became mmap_prepare (KMT_HAVE_MMAP_PREPARE).
 */
static int kmt_relay_open(struct inode *inode, struct file *file)
{
	int ret = relay_file_operations.open(inode, file);

	/* A new reader: every CPU describes its caches to it again. */
	if (!ret)
		atomic_inc(&kmt_desc_gen);
	return ret;
}

static int kmt_relay_release(struct inode *inode, struct file *file)
{
	return relay_file_operations.release(inode, file);
}

/*
 * relay's read() takes the writer's position (subbufs_produced, offset)
 * without a lock. The writer runs on the buffer's CPU with interrupts
 * off, so a reader bound to that CPU never sees a sub-buffer switch half
 * made; a reader elsewhere can, and then reads a sub-buffer of the
 * previous lap as if it were new (seen after CPU hotplug, which unbinds
 * kmemtraced's threads). So while tracing is on and the CPU online (both
 * held still for the read), only a task bound to that CPU alone may read:
 * others get EAGAIN, and bind (taskset -c N) or stop tracing first.
 */
static bool kmt_reader_bound(const struct rchan_buf *buf)
{
	return current->nr_cpus_allowed == 1 &&
	       cpumask_test_cpu(buf->cpu, current->cpus_ptr);
}

/*
 * Holds tracing's state and the CPU's online state still (the two locks,
 * taken in this order, released by kmt_reader_unlock()) and says whether
 * the calling task may read buf now: the one rule of read() and of the
 * mapped ring's KMT_IOC_RING_NEXT alike.
 */
static bool kmt_reader_lock(const struct rchan_buf *buf)
{
	mutex_lock(&kmt_enable_lock);
	cpus_read_lock();
	return !kmt_enabled || !cpu_online(buf->cpu) || kmt_reader_bound(buf);
}

static void kmt_reader_unlock(void)
{
	cpus_read_unlock();
	mutex_unlock(&kmt_enable_lock);
}

static ssize_t kmt_relay_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct rchan_buf *buf = file->private_data;
	ssize_t ret = -EAGAIN;

	if (kmt_reader_lock(buf))
		ret = relay_file_operations.read(file, ubuf, count, ppos);
	kmt_reader_unlock();
	return ret;
}

static __poll_t kmt_relay_poll(struct file *file, poll_table *wait)
{
	return relay_file_operations.poll(file, wait);
}

#if KMT_HAVE_MMAP_PREPARE
static int kmt_relay_mmap_prepare(struct vm_area_desc *desc)
{
	if (!relay_file_operations.mmap_prepare)
		return -ENODEV;
	return relay_file_operations.mmap_prepare(desc);
}
#else
static int kmt_relay_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (!relay_file_operations.mmap)
		return -ENODEV;
	return relay_file_operations.mmap(file, vma);
}
#endif

/*
 * The mapped reader's position is relay's own read position
 * (subbufs_consumed, bytes_consumed), kept as relay's read() keeps it,
 * so that read(), poll() and this agree. Called with interrupts off, so
 * that a writer on this CPU (a probe, interrupts off too) is wholly
 * before or after.
 */
static size_t kmt_ring_avail(const struct rchan_buf *buf)
{
	size_t size = buf->chan->subbuf_size;
	size_t cur = buf->subbufs_consumed % buf->chan->n_subbufs;
	size_t end;

	if (buf->subbufs_consumed != buf->subbufs_produced)
		end = size - buf->padding[cur];
	else	/* the sub-buffer being written; offset size + 1: none */
		end = buf->offset > size ? 0 : buf->offset;
	return end > buf->bytes_consumed ? end - buf->bytes_consumed : 0;
}

static int kmt_ring_next(struct rchan_buf *buf, struct kmt_ring_extent *ext)
{
	size_t size = buf->chan->subbuf_size;

	if (ext->done > kmt_ring_avail(buf) || ext->done % KMT_RECORD_SIZE)
		return -EINVAL;
	buf->bytes_consumed += ext->done;
	/* A finished sub-buffer read to its end goes back to the writer. */
	while (buf->subbufs_consumed != buf->subbufs_produced &&
	       buf->bytes_consumed +
	       buf->padding[buf->subbufs_consumed % buf->chan->n_subbufs] >= size) {
		relay_subbufs_consumed(buf->chan, buf->cpu, 1);
		buf->bytes_consumed = 0;
	}
	ext->offset = (buf->subbufs_consumed % buf->chan->n_subbufs) * size +
		      buf->bytes_consumed;
	ext->len = kmt_ring_avail(buf);
	ext->ring_size = buf->chan->alloc_size;
	return 0;
}

/* KMT_IOC_RING_NEXT: read()'s rules and lock, then the next extent. */
static long kmt_relay_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct rchan_buf *buf = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct kmt_ring_extent ext;
	unsigned long irqflags;
	long ret = -EAGAIN;

	if (cmd != KMT_IOC_RING_NEXT)
		return -ENOTTY;
	if (copy_from_user(&ext, uarg, sizeof(ext)))
		return -EFAULT;
	if (kmt_reader_lock(buf)) {
		inode_lock(file_inode(file));
		local_irq_save(irqflags);
		ret = kmt_ring_next(buf, &ext);
		local_irq_restore(irqflags);
		inode_unlock(file_inode(file));
	}
	kmt_reader_unlock();
	if (!ret && copy_to_user(uarg, &ext, sizeof(ext)))
		ret = -EFAULT;
	return ret;
}

/* What splice(2) itself answers for a file that cannot splice. */
static ssize_t kmt_relay_splice_read(struct file *in, loff_t *ppos,
				     struct pipe_inode_info *pipe, size_t len,
				     unsigned int flags)
{
	if (!relay_file_operations.splice_read)
		return -EINVAL;
	return relay_file_operations.splice_read(in, ppos, pipe, len, flags);
}

int kmt_check_relay_fops(void)
{
	const struct file_operations *r = &relay_file_operations;

	if (r->open && r->release && r->read && r->poll)
		return 0;
	pr_err("this kernel's relay files lack open, release, read or poll\n");
	return -EOPNOTSUPP;
}

static const struct file_operations kmt_relay_fops = {
	.owner = THIS_MODULE,
	.open = kmt_relay_open,
	.release = kmt_relay_release,
	.read = kmt_relay_read,
	.poll = kmt_relay_poll,
	.unlocked_ioctl = kmt_relay_ioctl,
#if KMT_HAVE_MMAP_PREPARE
	.mmap_prepare = kmt_relay_mmap_prepare,
#else
	.mmap = kmt_relay_mmap,
#endif
	.splice_read = kmt_relay_splice_read,
};

static struct dentry *kmt_create_buf_file(const char *filename,
					  struct dentry *parent, umode_t mode,
					  struct rchan_buf *buf, int *is_global)
{
	/*
	 * The "unsafe" variant hands out kmt_relay_fops itself (mmap and
	 * splice included) instead of debugfs's removal proxy, which has
	 * neither; the module reference taken at open makes removal safe.
	 */
	return debugfs_create_file_unsafe(filename, mode, parent, buf,
					  &kmt_relay_fops);
}

static int kmt_remove_buf_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

/*
 * No subbuf_start callback: relay's default (5.11 and later) refuses to
 * switch into a sub-buffer the reader has not consumed, which is the
 * no-overwrite mode kmt_slot() relies on, and it spares kmemtrace the
 * callback's signature, which changed after 6.12.
 */
const struct rchan_callbacks kmt_relay_callbacks = {
	.create_buf_file = kmt_create_buf_file,
	.remove_buf_file = kmt_remove_buf_file,
};
