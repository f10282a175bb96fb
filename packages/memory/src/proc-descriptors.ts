import { existsSync } from 'node:fs';

let procAvailable: boolean | undefined;

/**
 * True when `/proc/self/fd` shows open descriptors (Linux). There, a path
 * `/proc/self/fd/N/name` is looked up inside the very folder descriptor N holds, whatever
 * happens meanwhile to the path the folder was opened by: `openat`-style calls for Node.
 */
export function hasProcDescriptors(): boolean {
  procAvailable ??= existsSync('/proc/self/fd');
  return procAvailable;
}

/** The path of `name` looked up inside the folder descriptor `fd` (or of that folder itself). */
export function descriptorPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

// The ordinary path of each folder descriptor memory opened, so messages can name it. An
// entry stays after its descriptor is closed, until the number names another memory folder:
// an error is often put into words only after the folders it went through were let go.
const shownPaths = new Map<number, string>();

/** Records the ordinary path of a folder descriptor, for {@link showDescriptorPaths}. */
export function rememberDescriptorPath(fd: number, shown: string): void {
  shownPaths.set(fd, shown);
}

/**
 * Puts the ordinary folder path back into a message that names `/proc/self/fd/N/…` (a
 * system error from a call made through a descriptor), so users see the path they know.
 */
export function showDescriptorPaths(text: string): string {
  return text.replace(
    /\/proc\/self\/fd\/(\d+)/g,
    (whole, fd: string) => shownPaths.get(Number(fd)) ?? whole,
  );
}
