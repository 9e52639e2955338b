import { Puzzle, icons, type LucideIcon, type LucideProps } from "lucide-react";

/** Shown for a component whose `icon` is missing or not a lucide icon name. */
export const FallbackIcon: LucideIcon = Puzzle;

/** "file-text" → "FileText", the key lucide-react's `icons` map uses. */
export function kebabToPascal(name: string): string {
  return name
    .trim()
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

export function iconFor(name: string | null | undefined): LucideIcon {
  if (!name) return FallbackIcon;
  const key = kebabToPascal(name);
  return Object.hasOwn(icons, key) ? icons[key as keyof typeof icons] : FallbackIcon;
}

interface ComponentIconProps extends Omit<LucideProps, "name"> {
  /** The kebab-case lucide name from the catalog, e.g. "file-text". */
  name: string | null | undefined;
}

export function ComponentIcon({ name, ...props }: ComponentIconProps) {
  const Icon = iconFor(name);
  return <Icon aria-hidden="true" focusable="false" {...props} />;
}
