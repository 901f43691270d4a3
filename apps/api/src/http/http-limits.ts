/** Request bodies above this are refused with 413, as kube-apiserver's 3 MiB limit. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;
