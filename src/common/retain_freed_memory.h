#pragma once

namespace izwi {

/// Makes the process keep the memory a step frees for the next step. By default glibc's malloc
/// maps blocks of 128 KiB and more (a step's activations: a codec chunk, a batch's hidden states,
/// the logits) fresh from the kernel on every allocation and unmaps them when freed, so every step
/// pays a page fault and the kernel's zeroing for each 4 KiB page of them (in a VM, an exit to the
/// hypervisor each). After this, blocks up to 32 MiB (glibc's largest threshold) come from the
/// heap and the heap is never trimmed, and libtorch's CPU tensors of more than that come from a
/// LargeBlockCache: the process keeps its high-water mark of memory and reuses it. Process-wide.
/// Returns whether glibc's malloc was set (false where malloc is not glibc's).
bool retain_freed_memory();

}  // namespace izwi
