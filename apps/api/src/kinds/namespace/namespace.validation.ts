import { fieldErrors, type FieldError } from '@plinth/apimachinery';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { validateFinalizerName, validateKubeFinalizerName, validateKubeFinalizers } from '@plinth/apimachinery';

/** spec.finalizers as strings; non-string entries are rendered with String(). */
function specFinalizers(obj: KubeObject): string[] {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  return Array.isArray(spec.finalizers) ? spec.finalizers.map((f) => String(f)) : [];
}

/** A namespace finalizer: a qualified name that, without a '/', is a standard one. */
function validateSpecFinalizer(name: string, field: string): FieldError[] {
  return [...validateFinalizerName(name, field), ...validateKubeFinalizerName(name, field)];
}

/**
 * Kind-specific checks of a Namespace (upstream ValidateNamespace minus the
 * generic ObjectMeta part, which the caller runs): the core finalizer rule
 * on metadata.finalizers, and each spec.finalizers entry a qualified name
 * that is standard or domain-qualified. As upstream, spec errors sit on the
 * unindexed path `spec.finalizers`. status.phase is not checked here:
 * upstream resets status on create and keeps the stored one on update.
 * Pure; returns [] when valid.
 */
export function validateNamespace(obj: KubeObject): FieldError[] {
  return [
    ...validateKubeFinalizers(obj.metadata),
    ...specFinalizers(obj).flatMap((f) => validateSpecFinalizer(f, 'spec.finalizers')),
  ];
}

/**
 * What upstream's namespace strategy returns for an update of the main
 * resource (ValidateNamespace of the new object, then ValidateNamespaceUpdate),
 * minus the generic ObjectMeta checks. Pure; returns [] when valid.
 */
export function validateNamespaceUpdate(obj: KubeObject, _old: KubeObject): FieldError[] {
  return [...validateNamespace(obj), ...validateKubeFinalizers(obj.metadata)];
}

/**
 * Upstream ValidateNamespaceStatusUpdate minus generic ObjectMeta checks:
 * status.phase must be Active while deletionTimestamp is unset and
 * Terminating once it is set (path `status.Phase`, as upstream spells it).
 * For the namespaces/status subresource. Pure; returns [] when valid.
 */
export function validateNamespaceStatusUpdate(obj: KubeObject, _old: KubeObject): FieldError[] {
  const errs = validateKubeFinalizers(obj.metadata);
  const status = isPlainObject(obj.status) ? obj.status : {};
  const phase = typeof status.phase === 'string' ? status.phase : '';
  if (!obj.metadata.deletionTimestamp) {
    if (phase !== 'Active') {
      errs.push(fieldErrors.invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty"));
    }
  } else if (phase !== 'Terminating') {
    errs.push(fieldErrors.invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
  }
  return errs;
}

/**
 * Upstream ValidateNamespaceFinalizeUpdate minus generic ObjectMeta checks:
 * each spec.finalizers entry checked on its indexed path
 * (`spec.finalizers[i]`). For the namespaces/finalize subresource. Pure;
 * returns [] when valid.
 */
export function validateNamespaceFinalizeUpdate(obj: KubeObject, _old: KubeObject): FieldError[] {
  return [
    ...validateKubeFinalizers(obj.metadata),
    ...specFinalizers(obj).flatMap((f, i) => validateSpecFinalizer(f, `spec.finalizers[${i}]`)),
  ];
}
