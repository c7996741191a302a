// The uWS package silently falls back to a slow pure-JS shim when its native binary does not
// load. We refuse to run on that shim: performance and behaviour would not be what we ship.
import uWS from 'uWebSockets.js';

/** True when uWS is the native addon (its functions are native code, not JS). */
export function isNativeUws(module: { App?: unknown } = uWS): boolean {
  return typeof module.App === 'function' && /\[native code\]/.test(Function.prototype.toString.call(module.App));
}

export function assertNativeUws(): void {
  if (!isNativeUws()) {
    throw new Error(
      'uWebSockets.js is running on its JavaScript fallback (the native binary did not load, or ' +
        'UWS_USE_FALLBACK is set); refusing to start. Reinstall with Node 20 on linux-x64 glibc.',
    );
  }
}
