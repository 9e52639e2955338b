import { render, type RenderOptions } from "@testing-library/react";
import type { ReactElement, ReactNode } from "react";

import { CatalogProvider } from "../catalog/CatalogProvider";
import { ToastProvider } from "../components/Toasts";
import { RouterProvider } from "../router/Router";

function Providers({ children }: { children: ReactNode }) {
  return (
    <ToastProvider>
      <RouterProvider>
        <CatalogProvider>{children}</CatalogProvider>
      </RouterProvider>
    </ToastProvider>
  );
}

/** Render inside the app's providers (toasts, routing, catalog), as pages are. */
export function renderWithProviders(ui: ReactElement, options?: Omit<RenderOptions, "wrapper">) {
  return render(ui, { wrapper: Providers, ...options });
}
