import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { Account } from './account';

export type SubscriptionStatus = 'subscribed' | 'unsubscribed';

@Table({ tableName: 'contacts', underscored: true, timestamps: true })
export class Contact extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => Account)
  @Column({ type: DataType.UUID, allowNull: false })
  declare accountId: string;

  // As first given (trimmed); uniqueness is on emailNormalized.
  @Column({ type: DataType.STRING(254), allowNull: false })
  declare email: string;

  // Lower-cased email: unique per account, so A@x.io and a@x.io are one contact.
  @Column({ type: DataType.STRING(254), allowNull: false })
  declare emailNormalized: string;

  @Column({ type: DataType.STRING(32), allowNull: true })
  declare phone: string | null;

  @Column({ type: DataType.STRING(255), allowNull: true })
  declare firstName: string | null;

  @Column({ type: DataType.STRING(255), allowNull: true })
  declare lastName: string | null;

  // JSON text (see the migration): a string[] as written by the service.
  @Column({ type: DataType.TEXT, allowNull: false })
  declare tags: string;

  // JSON text: an object as written by the service.
  @Column({ type: DataType.TEXT, allowNull: false })
  declare customFields: string;

  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: 'subscribed' })
  declare emailSubscriptionStatus: SubscriptionStatus;

  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: 'subscribed' })
  declare whatsappSubscriptionStatus: SubscriptionStatus;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare updatedAt: Date;
}
