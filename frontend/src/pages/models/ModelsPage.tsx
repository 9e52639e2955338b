import { Boxes, CloudOff, Download, Lock } from "lucide-react";
import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";

import {
  deleteInstall,
  fetchInstaller,
  fetchModels,
  installTargetIn,
  MODEL_KINDS,
  removeModel,
  retryInstall,
  type InstalledModel,
  type InstallTarget,
  type ModelInstall,
} from "../../api/models";
import { fetchPresets } from "../../api/evaluation";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { useLocation, useNavigate } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { InstallDialog } from "./InstallDialog";
import { InstallList } from "./InstallList";
import { useInstallFeed } from "./installFeed";
import { ModelList } from "./ModelList";

/**
 * The models this machine can run, by kind (packaged and installed, with what each makes
 * possible), the user's installs with their live progress, and the install dialog: from the
 * Hugging Face Hub, a .zip of a model folder, or (administrators) a folder on the server.
 * What an ordinary user installs is private to them; what an administrator installs, shared.
 * `/models?install=<kind>:<id>` (where an error about a missing model links) opens the install
 * dialog filled in; a failed install can be retried or removed.
 */
export function ModelsPage() {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const language = i18n.resolvedLanguage ?? "en";
  const models = useLoad(fetchModels, []);
  const installer = useLoad(fetchInstaller, []);
  const presets = useLoad(fetchPresets, [language]);
  const { search } = useLocation();
  const navigate = useNavigate();
  const [installing, setInstalling] = useState(false);
  const [target, setTarget] = useState<InstallTarget | null>(null);
  const [removing, setRemoving] = useState<InstalledModel | null>(null);
  const [discarding, setDiscarding] = useState<ModelInstall | null>(null);
  const [busy, setBusy] = useState<ReadonlySet<number>>(new Set());
  useDocumentTitle(t("models.title"));

  // The address asks for an install: open the dialog on it, and leave a plain /models behind,
  // so that reloading or going back does not open it again.
  useEffect(() => {
    const asked = installTargetIn(search);
    if (!asked) return;
    setTarget(asked);
    setInstalling(true);
    navigate("/models", { replace: true });
  }, [search, navigate]);

  const { reload: reloadModels } = models;
  const { reload: reloadPresets } = presets;
  const onSettled = useCallback(
    (install: ModelInstall) => {
      reloadModels();
      reloadPresets();
      if (install.status === "ready") toast.success(t("models.installed", { name: install.name }));
      else if (install.status === "failed") toast.error(t("models.installFailed", { name: install.name }), new Error(install.error ?? ""));
    },
    [reloadModels, reloadPresets, toast, t],
  );
  const feed = useInstallFeed(language, onSettled);

  const settings = installer.state.status === "ready" ? installer.state.data : null;
  const presetNames = new Map(presets.state.status === "ready" ? presets.state.data.map((preset) => [preset.name, preset]) : []);

  const remove = async (model: InstalledModel) => {
    setRemoving(null);
    try {
      await removeModel(model.name);
      toast.success(t("models.removed", { name: model.name }));
      reloadModels();
      reloadPresets();
      void feed.refresh();
    } catch (error) {
      toast.error(t("models.removeFailed", { name: model.name }), error);
    }
  };

  const working = (id: number, on: boolean) =>
    setBusy((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });

  const retry = async (install: ModelInstall) => {
    working(install.id, true);
    try {
      await retryInstall(install.id);
      toast.success(t("models.installs.retried", { name: install.name }));
    } catch (error) {
      toast.error(t("models.installs.retryFailed", { name: install.name }), error);
    } finally {
      working(install.id, false);
      void feed.refresh();
    }
  };

  const discard = async (install: ModelInstall) => {
    setDiscarding(null);
    working(install.id, true);
    try {
      await deleteInstall(install.id);
      toast.success(t("models.installs.removed", { name: install.name }));
    } catch (error) {
      toast.error(t("models.installs.removeFailed", { name: install.name }), error);
    } finally {
      working(install.id, false);
      void feed.refresh();
    }
  };

  const closeInstall = () => {
    setInstalling(false);
    setTarget(null);
  };

  return (
    <section className="page">
      <header className="page__header">
        <div>
          <h1 className="page__title">{t("models.title")}</h1>
          <p className="page__subtitle">{t("models.subtitle")}</p>
        </div>
        <div className="page__actions">
          <button type="button" className="button button--primary" disabled={!settings} onClick={() => setInstalling(true)}>
            <Download aria-hidden="true" size={16} />
            {t("models.install.open")}
          </button>
        </div>
      </header>

      {settings?.offline && (
        <div className="notice notice--warning" role="note">
          <CloudOff aria-hidden="true" className="notice__icon" size={20} />
          <div>
            <p className="notice__title">{t("models.offline.title")}</p>
            <p className="notice__detail">{t("models.offline.detail")}</p>
          </div>
        </div>
      )}

      {settings && (
        <div className="notice notice--info" role="note" data-access={settings.installs_private ? "private" : "shared"}>
          <Lock aria-hidden="true" className="notice__icon" size={20} />
          <div>
            <p className="notice__title">{t("models.access.title")}</p>
            <p className="notice__detail">
              {t(settings.installs_private ? "models.access.private" : "models.access.admin")} {t("models.access.files")}
            </p>
          </div>
        </div>
      )}

      {(feed.installs?.length ?? 0) > 0 && (
        <section className="section" aria-labelledby="installs-title">
          <div className="section__header">
            <h2 id="installs-title" className="section__title">
              {t("models.installs.title")}
            </h2>
            <span className="muted">{t(`models.connection.${feed.connection}`)}</span>
          </div>
          <InstallList installs={feed.installs ?? []} busy={busy} onRetry={(install) => void retry(install)} onRemove={setDiscarding} />
        </section>
      )}
      {feed.error && <ErrorNotice title={t("models.installs.loadFailed")} message={feed.error} onRetry={() => void feed.refresh()} />}

      {models.state.status === "loading" && <Loading label={t("models.loading")} />}
      {models.state.status === "error" && (
        <ErrorNotice title={t("models.loadFailed")} message={models.state.message} onRetry={models.reload} />
      )}
      {models.state.status === "ready" &&
        MODEL_KINDS.map((kind) => {
          const ofKind = (models.state.status === "ready" ? models.state.data : []).filter((model) => model.kind === kind);
          return (
            <section key={kind} className="section" aria-labelledby={`models-${kind}`} data-kind={kind}>
              <div className="section__header">
                <h2 id={`models-${kind}`} className="section__title">
                  {t(`models.kinds.${kind}`)}
                </h2>
                <span className="muted">{t(`models.kindHints.${kind}`)}</span>
              </div>
              {ofKind.length === 0 ? (
                <EmptyState icon={<Boxes aria-hidden="true" size={28} />} title={t(`models.empty.${kind}`)}>
                  <p className="muted">{t(`models.emptyHint.${kind}`)}</p>
                </EmptyState>
              ) : (
                <ModelList models={ofKind} presets={presetNames} onRemove={(model) => setRemoving(model)} />
              )}
            </section>
          );
        })}

      {installing && settings && (
        <InstallDialog
          settings={settings}
          initial={target}
          onClose={closeInstall}
          onStarted={(install) => {
            closeInstall();
            feed.add(install);
            toast.success(t("models.install.started", { name: install.name }));
          }}
        />
      )}
      {discarding && (
        <ConfirmDialog
          title={t("models.installs.removeTitle")}
          message={t(`models.installs.removeMessage.${discarding.source}`, { name: discarding.name })}
          confirmLabel={t("models.installs.remove")}
          danger
          onConfirm={() => void discard(discarding)}
          onCancel={() => setDiscarding(null)}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={t("models.removeTitle")}
          message={t("models.removeMessage", { name: removing.display_name || removing.name })}
          confirmLabel={t("models.remove")}
          danger
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(null)}
        />
      )}
    </section>
  );
}
