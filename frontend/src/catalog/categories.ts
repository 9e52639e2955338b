import type { CatalogComponent } from "../api/components";

export interface CategoryGroup {
  category: string;
  components: CatalogComponent[];
}

/** Group by `category`, keeping the catalog's order of categories and of components within one. */
export function groupByCategory(components: readonly CatalogComponent[]): CategoryGroup[] {
  const groups = new Map<string, CatalogComponent[]>();
  for (const component of components) {
    const group = groups.get(component.category);
    if (group) group.push(component);
    else groups.set(component.category, [component]);
  }
  return Array.from(groups, ([category, members]) => ({ category, components: members }));
}
