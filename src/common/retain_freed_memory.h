#pragma once

namespace izwi {

/// Makes glibc's malloc keep the memory a step frees for the next step. By default blocks of 128
/// KiB and more (a step's activations: a codec chunk, a batch's hidden states, the logits) are
/// mapped fresh from the kernel on every allocation and unmapped when freed, so every step pays a
/// page fault and the kernel's zeroing for each 4 KiB page of them (in a VM, an exit to the
/// hypervisor each). After this, blocks up to 32 MiB (glibc's largest threshold) come from the
/// heap and the heap is never trimmed: the process keeps its high-water mark of heap memory and
/// reuses it. Process-wide; false where malloc is not glibc's (nothing changed then).
bool retain_freed_memory();

}  // namespace izwi
