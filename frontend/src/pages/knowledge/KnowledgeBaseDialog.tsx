import { ChevronRight } from "lucide-react";
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { pathErrorsOf, type ComponentRef, type PathError } from "../../api/components";
import {
  KNOWLEDGE_LANGUAGES,
  createKnowledgeBase,
  updateKnowledgeBase,
  type KnowledgeBase,
  type KnowledgeLanguage,
} from "../../api/knowledge";
import { Modal } from "../../components/Modal";
import { parsePath } from "../../components/RetrieverTree/paths";
import { ComponentRefEditor } from "../../components/SchemaForm/ComponentRefEditor";
import { toErrorSchema } from "../../components/SchemaForm/errors";
import { useToast } from "../../components/Toasts";

interface KnowledgeBaseDialogProps {
  /** The knowledge base to rename; none to create one. */
  editing?: KnowledgeBase;
  onDone: (knowledgeBase: KnowledgeBase) => void;
  onClose: () => void;
}

/** Errors under `field` (e.g. `chunker`), as the component editor's error tree. */
function errorsUnder(errors: readonly PathError[], field: string) {
  return toErrorSchema(
    errors
      .map((error) => ({ segments: parsePath(error.path), message: error.message }))
      .filter(({ segments }) => segments[0] === field && segments.length > 1)
      .map(({ segments, message }) => ({ path: segments.slice(1), message })),
  );
}

/** Create a knowledge base (name, language, optionally its chunker and embedding model) or rename one. */
export function KnowledgeBaseDialog({ editing, onDone, onClose }: KnowledgeBaseDialogProps) {
  const { t } = useTranslation();
  const toast = useToast();
  const [name, setName] = useState(editing?.name ?? "");
  const [description, setDescription] = useState(editing?.description ?? "");
  const [language, setLanguage] = useState<KnowledgeLanguage>(editing?.language ?? "en");
  const [chunker, setChunker] = useState<ComponentRef | null>(null);
  const [embedding, setEmbedding] = useState<ComponentRef | null>(null);
  const [advanced, setAdvanced] = useState(false);
  const [errors, setErrors] = useState<PathError[]>([]);
  const [busy, setBusy] = useState(false);
  const ids = { name: useId(), description: useId(), language: useId(), chunker: useId(), embedding: useId(), advanced: useId() };

  const messagesAt = (field: string) => errors.filter((error) => error.path === field).map((error) => error.message);
  const unplaced = errors.filter((error) => !["name", "description", "language"].includes(error.path) && !error.path.startsWith("chunker.") && !error.path.startsWith("embedding_model."));

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setErrors([]);
    try {
      const saved = editing
        ? await updateKnowledgeBase(editing.id, { name, description })
        : await createKnowledgeBase({ name, description, language, chunker, embedding_model: embedding });
      onDone(saved);
    } catch (error) {
      const list = pathErrorsOf(error);
      if (list?.length) {
        setErrors(list);
        if (list.some((item) => item.path.startsWith("chunker.") || item.path.startsWith("embedding_model."))) setAdvanced(true);
      } else {
        toast.error(editing ? t("knowledge.renameFailed") : t("knowledge.createFailed"), error);
      }
      setBusy(false);
    }
  };

  return (
    <Modal
      title={editing ? t("knowledge.editTitle") : t("knowledge.createTitle")}
      onClose={onClose}
      size={editing ? "small" : "medium"}
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form="knowledge-base-form" className="button button--primary" disabled={busy || !name.trim()}>
            {editing ? t("common.save") : t("knowledge.create")}
          </button>
        </>
      }
    >
      <form id="knowledge-base-form" className="stack" onSubmit={submit} noValidate>
        <TextField id={ids.name} label={t("knowledge.name")} value={name} onChange={setName} errors={messagesAt("name")} required autoFocus />
        <div className="field">
          <label htmlFor={ids.description} className="field__label">
            {t("knowledge.description")}
          </label>
          <textarea id={ids.description} className="input" rows={2} value={description} onChange={(event) => setDescription(event.target.value)} />
          {messagesAt("description").map((message) => (
            <p key={message} className="form-error">
              {message}
            </p>
          ))}
        </div>
        {!editing && (
          <>
            <div className="field">
              <label htmlFor={ids.language} className="field__label">
                {t("knowledge.language")}
              </label>
              <select id={ids.language} className="input" value={language} onChange={(event) => setLanguage(event.target.value as KnowledgeLanguage)}>
                {KNOWLEDGE_LANGUAGES.map((code) => (
                  <option key={code} value={code}>
                    {t(`knowledge.languages.${code}`)}
                  </option>
                ))}
              </select>
              <p className="form-field__hint">{t("knowledge.languageHint")}</p>
            </div>
            <button type="button" className="disclosure" aria-expanded={advanced} aria-controls={ids.advanced} onClick={() => setAdvanced((open) => !open)}>
              <ChevronRight aria-hidden="true" size={16} className="disclosure__chevron" />
              {t("knowledge.advanced")}
            </button>
            <div id={ids.advanced} hidden={!advanced} className="stack">
              <div className="field">
                <label htmlFor={ids.chunker} className="field__label">
                  {t("knowledge.chunker")}
                </label>
                <ComponentRefEditor id={ids.chunker} kind="chunker" value={chunker} onChange={setChunker} nullable errorSchema={errorsUnder(errors, "chunker")} />
                <p className="form-field__hint">{t("knowledge.chunkerHint")}</p>
              </div>
              <div className="field">
                <label htmlFor={ids.embedding} className="field__label">
                  {t("knowledge.embedding")}
                </label>
                <ComponentRefEditor id={ids.embedding} kind="embedding" value={embedding} onChange={setEmbedding} nullable errorSchema={errorsUnder(errors, "embedding_model")} />
                <p className="form-field__hint">{t("knowledge.embeddingHint")}</p>
              </div>
            </div>
          </>
        )}
        {unplaced.length > 0 && (
          <ul className="form-error">
            {unplaced.map((error) => (
              <li key={error.path + error.message}>{error.path ? `${error.path}: ${error.message}` : error.message}</li>
            ))}
          </ul>
        )}
      </form>
    </Modal>
  );
}

function TextField(props: { id: string; label: string; value: string; onChange: (value: string) => void; errors: string[]; required?: boolean; autoFocus?: boolean }) {
  return (
    <div className="field">
      <label htmlFor={props.id} className="field__label">
        {props.label}
      </label>
      <input
        id={props.id}
        className="input"
        value={props.value}
        required={props.required}
        data-autofocus={props.autoFocus || undefined}
        aria-invalid={props.errors.length > 0 || undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {props.errors.map((message) => (
        <p key={message} className="form-error">
          {message}
        </p>
      ))}
    </div>
  );
}
