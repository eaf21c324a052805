/** The two temporary names a write with this 12-hex-digit id uses, spelled out here as a restart finds them on disk. */
export const swapNames = (id: string) => ({ tmp: `.changeset-${id}.tmp`, aside: `.changeset-${id}.old` });
