/*
 * bcryptprimitives.dll for Wine 8, which lacks it: the Go runtime (1.24 and later)
 * loads it at start-up for ProcessPrng, its source of random bytes on Windows 10 and
 * later. This one answers ProcessPrng from RtlGenRandom (advapi32's SystemFunction036),
 * which Wine has. Built by the Windows time zone test with
 *   x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32
 * and used only to run the Windows build under Wine.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
	while (length > 0) {
		ULONG n = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}
