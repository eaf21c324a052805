/** Debian's Chromium as the browser tests drive it (through playwright-core; no browser is downloaded). */

/** The browser's executable. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, without the sandbox (tests run as root in containers), the GPU or background requests. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
