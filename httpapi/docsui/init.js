// Starts Swagger UI on the server's own OpenAPI document. "Authorize"
// takes an API key (Bearer); "Try it out" then sends it with each call.
// validatorUrl null: no request to any other host.
window.pregaoDocs = SwaggerUIBundle({
  url: "openapi.json",
  dom_id: "#pregao-docs",
  deepLinking: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  tryItOutEnabled: true,
  persistAuthorization: false,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout"
});
