import { LoaderCircle } from "lucide-react";
import { Suspense, lazy, type ReactNode } from "react";
import { useTranslation } from "react-i18next";

import { AuthProvider, useAuth } from "./auth/AuthProvider";
import { SignInPage } from "./auth/SignInPage";
import { CatalogProvider } from "./catalog/CatalogProvider";
import { ErrorNotice, Loading } from "./components/StatusViews";
import { ToastProvider } from "./components/Toasts";
import { NotFoundPage } from "./pages/NotFoundPage";
import { matchPath, type RouteParams } from "./router/match";
import { Redirect, RouterProvider, useLocation } from "./router/Router";
import { Layout } from "./shell/Layout";

// Pages load when first visited: the shell and the sign-in page come up without the forms,
// the validator and the icon set the pages need.
const KnowledgeBaseListPage = lazy(() => import("./pages/knowledge/KnowledgeBaseListPage").then((m) => ({ default: m.KnowledgeBaseListPage })));
const KnowledgeBasePage = lazy(() => import("./pages/knowledge/KnowledgeBasePage").then((m) => ({ default: m.KnowledgeBasePage })));
const PipelineListPage = lazy(() => import("./pages/builder/PipelineListPage").then((m) => ({ default: m.PipelineListPage })));
const ChatPage = lazy(() => import("./pages/chat/ChatPage").then((m) => ({ default: m.ChatPage })));
const ComparePage = lazy(() => import("./pages/chat/ComparePage").then((m) => ({ default: m.ComparePage })));
const EvaluationPage = lazy(() => import("./pages/evaluation/EvaluationPage").then((m) => ({ default: m.EvaluationPage })));
const EvaluationDetailPage = lazy(() => import("./pages/evaluation/EvaluationDetailPage").then((m) => ({ default: m.EvaluationDetailPage })));
const ModelsPage = lazy(() => import("./pages/models/ModelsPage").then((m) => ({ default: m.ModelsPage })));
const CredentialsPage = lazy(() => import("./pages/credentials/CredentialsPage").then((m) => ({ default: m.CredentialsPage })));
const AccountPage = lazy(() => import("./pages/account/AccountPage").then((m) => ({ default: m.AccountPage })));
const PipelineEditorPage = lazy(() => import("./pages/builder/PipelineEditorPage").then((m) => ({ default: m.PipelineEditorPage })));

interface Route {
  pattern: string;
  render: (params: RouteParams) => ReactNode;
  /** Routes sharing a section key keep their page mounted when moving between them. */
  section?: string;
}

const ROUTES: Route[] = [
  { pattern: "/", render: () => <Redirect to="/knowledge-bases" /> },
  { pattern: "/knowledge-bases", render: () => <KnowledgeBaseListPage /> },
  { pattern: "/knowledge-bases/:id", render: ({ id }) => <KnowledgeBasePage id={Number(id)} /> },
  { pattern: "/pipelines", render: () => <PipelineListPage /> },
  { pattern: "/pipelines/new", render: () => <PipelineEditorPage id={null} /> },
  { pattern: "/pipelines/:id", render: ({ id }) => <PipelineEditorPage id={Number(id)} /> },
  { pattern: "/chat", render: () => <ChatPage id={null} />, section: "chat" },
  { pattern: "/chat/compare", render: () => <ComparePage /> },
  { pattern: "/chat/:id", render: ({ id }) => <ChatPage id={Number(id)} />, section: "chat" },
  { pattern: "/evaluation", render: () => <EvaluationPage /> },
  { pattern: "/evaluation/:id", render: ({ id }) => <EvaluationDetailPage id={Number(id)} /> },
  { pattern: "/models", render: () => <ModelsPage /> },
  { pattern: "/credentials", render: () => <CredentialsPage /> },
  { pattern: "/account", render: () => <AccountPage /> },
];

function Routes() {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, pathname);
    // Every route parameter is a numeric id.
    if (params && Object.values(params).every((value) => /^\d+$/.test(value))) {
      // Keyed by the address: another object's page starts fresh instead of showing the last one's.
      return (
        <Suspense key={route.section ?? pathname} fallback={<Loading label={t("app.loadingPage")} />}>
          {route.render(params)}
        </Suspense>
      );
    }
  }
  return <NotFoundPage />;
}

function Gate() {
  const { t } = useTranslation();
  const { state, recheck } = useAuth();
  if (state.status === "checking") {
    return (
      <p role="status" className="status-line status-line--page">
        <LoaderCircle aria-hidden="true" className="spin" size={18} />
        {t("app.loading")}
      </p>
    );
  }
  if (state.status === "unreachable") {
    return (
      <main className="app-main">
        <ErrorNotice title={t("app.unreachable")} message={state.message} onRetry={recheck} />
      </main>
    );
  }
  if (state.status === "anonymous") return <SignInPage />;
  return (
    <CatalogProvider>
      <Layout>
        <Routes />
      </Layout>
    </CatalogProvider>
  );
}

export function App() {
  return (
    <ToastProvider>
      <RouterProvider>
        <AuthProvider>
          <Gate />
        </AuthProvider>
      </RouterProvider>
    </ToastProvider>
  );
}
