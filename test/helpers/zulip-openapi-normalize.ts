/**
 * In-memory adaptations of Zulip's OpenAPI extract for openapi-backend. The YAML file itself is
 * never edited; zulip-openapi.ts applies these to a deep copy.
 */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * In-memory adaptations, each for a construct the file uses that JSON Schema reads otherwise:
 * 1. `nullable: true` without `type` (User's property placeholders such as
 *    `delivery_email: {nullable: true}`): it adds nothing to the base schema it sits beside,
 *    but Ajv refuses to compile it. It is dropped.
 * 2. A response schema whose top level is `oneOf` lists documented alternatives (e.g. the seven
 *    update-status errors, all `CodedError`, differing only in their example). They are not
 *    exclusive, so `oneOf` would reject every body; they are read as `anyOf`.
 * 3. GET operations document their parameters as a form `requestBody` (GET /channel_folders'
 *    include_archived); Zulip reads them from the query string, so they become query
 *    parameters, JSON-encoded where the form encoding says `application/json`.
 * The top-level `security: - basicAuth` against `securitySchemes: BasicAuth` is left as it is:
 * openapi-backend only enforces security in handleRequest, which is not used; requests are
 * checked for Basic credentials by zulip-openapi.ts's checkBasicAuth instead.
 */
export function normalizeDefinition(definition: Json): Json {
  const dropTypelessNullable = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(dropTypelessNullable);
    if (!isObject(node)) return;
    if ('nullable' in node && !('type' in node)) delete node.nullable;
    Object.values(node).forEach(dropTypelessNullable);
  };
  dropTypelessNullable(definition);

  for (const pathItem of Object.values(isObject(definition.paths) ? definition.paths : {})) {
    if (!isObject(pathItem)) continue;
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!isObject(operation)) continue;
      for (const response of Object.values(
        isObject(operation.responses) ? operation.responses : {},
      )) {
        const content = isObject(response) && isObject(response.content) ? response.content : {};
        for (const media of Object.values(content)) {
          if (isObject(media) && isObject(media.schema) && Array.isArray(media.schema.oneOf)) {
            media.schema.anyOf = media.schema.oneOf;
            delete media.schema.oneOf;
          }
        }
      }
      if (method === 'get') moveFormBodyToQuery(operation);
    }
  }
  return definition;
}

function moveFormBodyToQuery(operation: Json): void {
  const body = isObject(operation.requestBody) ? operation.requestBody : undefined;
  const content = body && isObject(body.content) ? body.content : undefined;
  const form = content?.['application/x-www-form-urlencoded'];
  if (!isObject(form) || !isObject(form.schema) || !isObject(form.schema.properties)) return;
  const required = Array.isArray(form.schema.required) ? form.schema.required : [];
  const encoding = isObject(form.encoding) ? form.encoding : {};
  const parameters = Array.isArray(operation.parameters) ? operation.parameters : [];
  for (const [name, schema] of Object.entries(form.schema.properties)) {
    const encoded = encoding[name];
    const isJson = isObject(encoded) && encoded.contentType === 'application/json';
    parameters.push({
      name,
      in: 'query',
      required: required.includes(name),
      ...(isJson ? { content: { 'application/json': { schema } } } : { schema }),
    });
  }
  operation.parameters = parameters;
  delete operation.requestBody;
}
