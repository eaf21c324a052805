import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/** True for host names and addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = unbracket(host).toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/** True for the addresses that bind every interface. */
export function isWildcardHost(host: string): boolean {
  const h = unbracket(host);
  return h === '0.0.0.0' || h === '::' || h === '';
}

/** `host` as it appears in a URL authority (IPv6 addresses in brackets). */
export function urlHost(host: string): string {
  const h = unbracket(host);
  return isIP(h) === 6 ? `[${h}]` : h;
}

/** Every address of this machine's interfaces, for servers bound to a wildcard address. */
export function localAddresses(): string[] {
  const out = new Set<string>(['127.0.0.1', '::1', 'localhost']);
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) out.add(info.address);
  }
  return [...out];
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
